package nodemailer

import (
	"context"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/provider"
)

// pool bounds a sender's open connections and keeps the idle ones for the
// next send, newest first, so that the oldest age out when traffic drops.
type pool struct {
	slots chan struct{} // one per open connection (or dial under way)
	idle  time.Duration
	cfg   provider.Config

	mu     sync.Mutex
	conns  []*conn // idle, oldest first
	closed bool
	timer  *time.Timer // closes connections idle too long
	armed  bool
}

func newPool(size int, idle time.Duration, cfg provider.Config) *pool {
	return &pool{slots: make(chan struct{}, size), idle: idle, cfg: cfg}
}

// acquire waits for the right to hold a connection.
func (p *pool) acquire(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pool) release() { <-p.slots }

// get returns an idle connection that has not idled too long, or nil.
func (p *pool) get() (*conn, bool) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.conns) > 0 {
		cn := p.conns[len(p.conns)-1]
		p.conns = p.conns[:len(p.conns)-1]
		if now.Sub(cn.used) < p.idle && alive(cn.raw) {
			return cn, true
		}
		go cn.quit()
	}
	return nil, false
}

// put keeps a connection after a successful transaction, or closes it
// once it has carried maxMessages or the sender is closed.
func (p *pool) put(cn *conn) {
	cn.used = time.Now()
	p.mu.Lock()
	if p.closed || cn.sent >= maxMessages {
		p.mu.Unlock()
		go cn.quit()
		return
	}
	p.conns = append(p.conns, cn)
	if !p.armed {
		p.armed = true
		if p.timer == nil {
			p.timer = time.AfterFunc(p.idle, p.reap)
		} else {
			p.timer.Reset(p.idle)
		}
	}
	p.mu.Unlock()
}

// reap closes the connections that idled too long and rearms for the
// oldest of the others.
func (p *pool) reap() {
	now := time.Now()
	p.mu.Lock()
	p.armed = false
	var expired []*conn
	for len(p.conns) > 0 && now.Sub(p.conns[0].used) >= p.idle {
		expired = append(expired, p.conns[0])
		p.conns = p.conns[1:]
	}
	if len(p.conns) > 0 && !p.closed {
		p.armed = true
		p.timer.Reset(p.idle - now.Sub(p.conns[0].used))
	}
	p.mu.Unlock()
	for _, cn := range expired {
		cn.quit()
	}
	if len(expired) > 0 && p.cfg.Logger != nil {
		p.cfg.Logger.Debug("smtp: closed idle connections", "count", len(expired))
	}
}

// idleCount is how many connections wait for a send.
func (p *pool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// close says goodbye on the idle connections; busy ones close when they
// come back.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = nil
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, cn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn.quit()
		}()
	}
	wg.Wait()
}
