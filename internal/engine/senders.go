package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/registry"
	"github.com/herald-notify/herald/internal/store"
)

// DeliveryOptions configure delivery through providers.
type DeliveryOptions struct {
	// Registry is the provider table (default: registry.Default()).
	Registry *provider.Registry
	// AllowPrivateNetworks lets provider calls reach loopback, private,
	// link-local and metadata addresses (HERALD_ALLOW_PRIVATE_NETWORKS).
	AllowPrivateNetworks bool
	// Resolve looks host names up (tests; default: the system resolver).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// TLS is the client TLS configuration (tests add a CA; nil: the system
	// roots, to which SSL_CERT_FILE adds).
	TLS *tls.Config
	// Timeout bounds one provider call (default 10 s).
	Timeout time.Duration
	// Attempts is how many times a transient failure is tried on one
	// integration before failing over (default 3).
	Attempts int
	// PerIntegration bounds the calls in flight to one integration (default
	// 256): provider calls are I/O, and a provider answering in 200 ms
	// takes 1,000 messages a second only with ~200 calls in flight. A
	// provider's own default (SMTP: its 32 connections) and an
	// integration's configurations.maxConcurrency take precedence.
	PerIntegration int
}

func (d *DeliveryOptions) defaults() {
	if d.Registry == nil {
		d.Registry = registry.Default()
	}
	if d.Timeout <= 0 {
		d.Timeout = 10 * time.Second
	}
	if d.Attempts <= 0 {
		d.Attempts = 3
	}
	if d.PerIntegration <= 0 {
		d.PerIntegration = DefaultPerIntegration
	}
}

// DefaultPerIntegration is the default bound of calls in flight to one
// integration.
const DefaultPerIntegration = 256

// MaxIntegrationConcurrency bounds configurations.maxConcurrency.
const MaxIntegrationConcurrency = 1000

// senders keeps one sender per integration, rebuilt when the integration
// changes, and bounds the calls in flight to each integration.
type senders struct {
	reg  *provider.Registry
	base provider.Config
	per  int

	mu       sync.Mutex
	byID     map[string]*senderEntry
	inFlight atomic.Int64 // provider calls in flight, all integrations
}

type senderEntry struct {
	updated time.Time
	creds   []byte
	confs   []byte
	s       provider.Sender
	slots   chan struct{} // one per call in flight
	// heldUntil (Unix ns) is when the provider's last Retry-After ends:
	// until then no call goes out, and deliveries wait in the queue.
	heldUntil atomic.Int64
}

// hold stops calls to the integration until t (a 429's Retry-After).
func (e *senderEntry) hold(t time.Time) {
	for {
		cur := e.heldUntil.Load()
		if t.UnixNano() <= cur || e.heldUntil.CompareAndSwap(cur, t.UnixNano()) {
			return
		}
	}
}

// held reports how long calls to the integration must still wait.
func (e *senderEntry) held(now time.Time) time.Duration {
	return time.Duration(e.heldUntil.Load() - now.UnixNano())
}

// maxSenders bounds the cache; beyond it the oldest-built entries go.
const maxSenders = 1024

func newSenders(o DeliveryOptions, now func() time.Time) *senders {
	d := &netguard.Dialer{AllowPrivate: o.AllowPrivateNetworks, Resolve: o.Resolve}
	tr := d.Transport()
	if o.TLS != nil {
		tr.TLSClientConfig = o.TLS.Clone()
	}
	return &senders{
		reg: o.Registry, per: o.PerIntegration, byID: map[string]*senderEntry{},
		base: provider.Config{HTTP: &http.Client{Transport: tr}, Dial: d.DialContext, TLS: o.TLS, Now: now},
	}
}

// get returns the sender of an integration and its bound of calls in flight.
func (ss *senders) get(in store.Integration) (*senderEntry, error) {
	e, ok := ss.reg.Get(in.ProviderID)
	if !ok {
		return nil, provider.Permanentf("Herald does not deliver through %s yet", in.ProviderID)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if cur := ss.byID[in.ID]; cur != nil && cur.updated.Equal(in.UpdatedAt) && bytes.Equal(cur.creds, in.Credentials) &&
		bytes.Equal(cur.confs, in.Configurations) {
		return cur, nil
	}
	creds, err := provider.ParseCredentials(in.Credentials)
	if err != nil {
		return nil, provider.Permanentf("the integration's credentials are not a JSON object")
	}
	if missing := e.Missing(creds); len(missing) > 0 {
		return nil, provider.Permanentf("the integration's credentials lack %v", missing)
	}
	cfg := ss.base
	cfg.Credentials = creds
	cfg.Concurrency = ss.concurrency(e, in.Configurations)
	s, err := e.Sender(cfg)
	if err != nil {
		return nil, err
	}
	if old := ss.byID[in.ID]; old != nil {
		closeLater(old.s)
	}
	if len(ss.byID) >= maxSenders {
		for id, old := range ss.byID {
			closeLater(old.s)
			delete(ss.byID, id)
			break
		}
	}
	entry := &senderEntry{updated: in.UpdatedAt, creds: in.Credentials, confs: in.Configurations, s: s,
		slots: make(chan struct{}, cfg.Concurrency)}
	ss.byID[in.ID] = entry
	return entry, nil
}

// concurrency is an integration's bound of calls in flight: its
// configurations.maxConcurrency, else its provider's default, else the
// process's.
func (ss *senders) concurrency(e provider.Entry, confs []byte) int {
	var c struct {
		MaxConcurrency int `json:"maxConcurrency"`
	}
	if len(confs) > 0 && json.Unmarshal(confs, &c) == nil && c.MaxConcurrency > 0 {
		return min(c.MaxConcurrency, MaxIntegrationConcurrency)
	}
	if e.Concurrency > 0 {
		return e.Concurrency
	}
	return ss.per
}

// closeLater closes a replaced sender once calls in flight are done.
func closeLater(s provider.Sender) {
	if c, ok := s.(provider.Closer); ok {
		time.AfterFunc(time.Minute, func() { _ = c.Close() })
	}
}

// slot waits for a free call slot of the integration; release frees it.
func (ss *senders) slot(ctx context.Context, e *senderEntry) (release func(), err error) {
	select {
	case e.slots <- struct{}{}:
		ss.inFlight.Add(1)
		return func() { ss.inFlight.Add(-1); <-e.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close closes every cached sender.
func (ss *senders) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for id, e := range ss.byID {
		if c, ok := e.s.(provider.Closer); ok {
			_ = c.Close()
		}
		delete(ss.byID, id)
	}
}
