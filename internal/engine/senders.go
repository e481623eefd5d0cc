package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"net/netip"
	"sync"
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
	// PerProvider bounds the concurrent calls to one provider (default 16).
	PerProvider int
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
	if d.PerProvider <= 0 {
		d.PerProvider = 16
	}
}

// senders keeps one sender per integration, rebuilt when the integration
// changes, and bounds the concurrent calls to each provider.
type senders struct {
	reg  *provider.Registry
	base provider.Config
	per  int

	mu    sync.Mutex
	byID  map[string]*senderEntry
	slots map[string]chan struct{}
}

type senderEntry struct {
	updated time.Time
	creds   []byte
	s       provider.Sender
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
		reg: o.Registry, per: o.PerProvider, byID: map[string]*senderEntry{}, slots: map[string]chan struct{}{},
		base: provider.Config{HTTP: &http.Client{Transport: tr}, Dial: d.DialContext, TLS: o.TLS, Now: now},
	}
}

// get returns the sender of an integration.
func (ss *senders) get(in store.Integration) (provider.Sender, error) {
	e, ok := ss.reg.Get(in.ProviderID)
	if !ok {
		return nil, provider.Permanentf("Herald does not deliver through %s yet", in.ProviderID)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if cur := ss.byID[in.ID]; cur != nil && cur.updated.Equal(in.UpdatedAt) && bytes.Equal(cur.creds, in.Credentials) {
		return cur.s, nil
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
	ss.byID[in.ID] = &senderEntry{updated: in.UpdatedAt, creds: in.Credentials, s: s}
	return s, nil
}

// closeLater closes a replaced sender once calls in flight are done.
func closeLater(s provider.Sender) {
	if c, ok := s.(provider.Closer); ok {
		time.AfterFunc(time.Minute, func() { _ = c.Close() })
	}
}

// slot waits for a free call slot of a provider; release frees it.
func (ss *senders) slot(ctx context.Context, providerID string) (release func(), err error) {
	ss.mu.Lock()
	ch := ss.slots[providerID]
	if ch == nil {
		ch = make(chan struct{}, ss.per)
		ss.slots[providerID] = ch
	}
	ss.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
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
