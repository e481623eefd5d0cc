package httpapi

import (
	"container/list"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// authLimitAddresses caps the client addresses whose failures are tracked:
// an attacker rotating addresses cannot grow the table past it (the least
// recently failing address is forgotten first).
const authLimitAddresses = 10_000

// authLimiter limits failed authentications per client address: a token
// bucket of `limit` tokens refilled over a minute, one token spent per
// failure. It is consulted before a key is looked up, so that a blocked
// address costs no store work. Successes cost a map look-up and no memory.
type authLimiter struct {
	limit float64 // failures per minute, also the burst
	rate  float64 // tokens per second
	max   int     // tracked addresses
	now   func() time.Time
	log   *slog.Logger

	mu    sync.Mutex
	table map[string]*list.Element // of *authEntry
	lru   list.List                // most recently failing first
}

type authEntry struct {
	addr   string
	tokens float64
	last   time.Time
}

func newAuthLimiter(perMinute int, now func() time.Time, log *slog.Logger) *authLimiter {
	return &authLimiter{limit: float64(perMinute), rate: float64(perMinute) / 60, max: authLimitAddresses, now: now, log: log,
		table: map[string]*list.Element{}}
}

// refill brings e's tokens up to now.
func (l *authLimiter) refill(e *authEntry, now time.Time) {
	if now.After(e.last) {
		e.tokens = min(l.limit, e.tokens+now.Sub(e.last).Seconds()*l.rate)
		e.last = now
	}
}

// allow answers the 429 for an address out of tokens; an address whose
// bucket is full again is forgotten.
func (l *authLimiter) allow(w http.ResponseWriter, addr string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.table[addr]
	if !ok {
		return nil
	}
	e := el.Value.(*authEntry)
	l.refill(e, l.now())
	if e.tokens >= l.limit {
		l.lru.Remove(el)
		delete(l.table, addr)
		return nil
	}
	if e.tokens >= 1 {
		return nil
	}
	secs := max(int(math.Ceil((1-e.tokens)/l.rate)), 1)
	w.Header().Set("RateLimit-Limit", fmt.Sprintf("%.0f", l.limit))
	w.Header().Set("RateLimit-Remaining", "0")
	w.Header().Set("RateLimit-Reset", fmt.Sprint(secs))
	ae := errorf(http.StatusTooManyRequests, "Too many failed authentications from this address; retry later")
	ae.retryAfter = fmt.Sprint(secs)
	return ae
}

// fail spends a token of addr.
func (l *authLimiter) fail(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	el, ok := l.table[addr]
	if !ok {
		if len(l.table) >= l.max {
			oldest := l.lru.Back()
			l.lru.Remove(oldest)
			delete(l.table, oldest.Value.(*authEntry).addr)
		}
		el = l.lru.PushFront(&authEntry{addr: addr, tokens: l.limit, last: now})
		l.table[addr] = el
	}
	l.lru.MoveToFront(el)
	e := el.Value.(*authEntry)
	l.refill(e, now)
	before := e.tokens
	// Concurrent failures may pass allow together; never owe more than one.
	e.tokens = max(e.tokens-1, 0)
	if before >= 1 && e.tokens < 1 {
		l.log.Warn("too many failed authentications: address blocked", "address", addr, "limitPerMinute", l.limit)
	}
}

// size is the number of tracked addresses.
func (l *authLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.table)
}

// clientAddr is the address failures are counted against: the connection's
// peer (X-Forwarded-For is not trusted: any client can send it), an IPv6
// peer by its /64, which one client commonly holds whole.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.WithZone("").Prefix(64)
		return p.String()
	}
	return ip.String()
}

// authenticateLimited is authenticate behind the failed-authentication
// limit: a blocked address is refused before its key is looked up, and
// only a 401 counts as a failure (a store error is not the client's).
func (s *Server) authenticateLimited(w http.ResponseWriter, r *http.Request, a access) (caller, error) {
	var c caller
	err := s.limitAuth(w, r, func() error {
		var err error
		c, err = s.authenticate(r, a)
		return err
	})
	return c, err
}

// limitAuth runs check, an authentication, behind the failed-authentication
// limit: a blocked address gets its 429 without check running, and a 401
// (or another error marked authFailure) from check spends one of the
// address's tokens.
func (s *Server) limitAuth(w http.ResponseWriter, r *http.Request, check func() error) error {
	if s.authLimit == nil {
		return check()
	}
	addr := clientAddr(r)
	if err := s.authLimit.allow(w, addr); err != nil {
		return err
	}
	err := check()
	var ae *apiError
	if errors.As(err, &ae) && (ae.status == http.StatusUnauthorized || ae.authFailure) {
		s.authLimit.fail(addr)
	}
	return err
}
