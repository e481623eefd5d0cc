package webhooks

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/store"
)

// Store is what the webhooks read and write.
type Store interface {
	store.Webhooks
	EnvironmentGetByID(ctx context.Context, id string) (store.Environment, error)
	store.Realtime
}

// Options configure a Service.
type Options struct {
	Store  Store
	Logger *slog.Logger
	// Metrics, when set, counts the attempts' outcomes.
	Metrics *metrics.Metrics
	// AllowPrivateNetworks lets endpoints be (and attempts reach) loopback,
	// private and link-local addresses.
	AllowPrivateNetworks bool
	// Schedule is the delay of each attempt (default DefaultSchedule).
	Schedule []time.Duration
	// Timeout bounds one attempt (default 15 s).
	Timeout time.Duration
	// Concurrency bounds the attempts in flight in one process (default 64).
	Concurrency int
	// Poll is the longest wait between claims when nothing wakes the
	// sender (default 1 s): attempts stored by another process are seen
	// within it.
	Poll time.Duration
	// CacheTTL is how long an environment's endpoints are remembered by
	// the emitters (default 2 s): changes made through another process are
	// seen within it.
	CacheTTL time.Duration
	// Dialer connects the attempts (default: the network guard, private
	// networks allowed as AllowPrivateNetworks says).
	Dialer *netguard.Dialer
	// Transport, when set, makes the attempts' requests instead of one
	// dialing through Dialer (tests).
	Transport http.RoundTripper
	// Now is the clock (tests).
	Now func() time.Time
}

// DefaultTimeout bounds one attempt: a 2xx answer within it succeeds.
const DefaultTimeout = 15 * time.Second

// Service emits events and sends them.
type Service struct {
	o      Options
	log    *slog.Logger
	now    func() time.Time
	client *http.Client
	cache  envCache
	// wake tells the sender that attempts were stored here.
	wake chan struct{}
	// drainWake tells Run that this process's store wrote outbox entries.
	drainWake chan struct{}
	// own are the entries this process's store wrote, for drainOwn.
	ownMu sync.Mutex
	own   []store.OutboxEntry
}

// New builds a Service.
func New(o Options) *Service {
	if len(o.Schedule) == 0 {
		o.Schedule = DefaultSchedule
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dialer == nil {
		o.Dialer = &netguard.Dialer{AllowPrivate: o.AllowPrivateNetworks}
	}
	if o.Transport == nil {
		tr := o.Dialer.Transport()
		tr.ResponseHeaderTimeout = o.Timeout
		o.Transport = tr
	}
	s := &Service{o: o, log: o.Logger, now: o.Now, wake: make(chan struct{}, 1),
		client: &http.Client{Transport: o.Transport, Timeout: o.Timeout,
			// A redirect fails the attempt: it is never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	s.cache = envCache{ttl: o.CacheTTL, entries: map[string]*envEntry{}}
	s.drainWake = make(chan struct{}, 1)
	return s
}

// AllowPrivateNetworks reports whether endpoints may be private addresses.
func (s *Service) AllowPrivateNetworks() bool { return s.o.AllowPrivateNetworks }

// Changed forgets what this process remembers of an environment's
// endpoints: call it after changing them.
func (s *Service) Changed(environmentID string) { s.cache.forget(environmentID) }

// QueueStats reads the attempts queue (the metrics' reading).
func (s *Service) QueueStats(ctx context.Context, now time.Time) (store.WebhookQueue, error) {
	return s.o.Store.WebhookQueueStats(ctx, now)
}

// envCache remembers, per environment, its identifier and the event types
// of its enabled endpoints, so that an event of an environment without
// endpoints costs one map look-up.
type envCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]*envEntry
}

type envEntry struct {
	identifier string
	types      [][]string // of each enabled endpoint
	at         time.Time
}

// wants reports whether an enabled endpoint takes typ.
func (e *envEntry) wants(typ string) bool {
	for _, t := range e.types {
		if store.WebhookTypesWant(t, typ) {
			return true
		}
	}
	return false
}

// peek is the entry of env when it is fresh.
func (c *envCache) peek(env string, now time.Time) *envEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[env]
	if e == nil || now.Sub(e.at) >= c.ttl || now.Before(e.at) {
		return nil
	}
	return e
}

func (c *envCache) forget(env string) {
	c.mu.Lock()
	delete(c.entries, env)
	c.mu.Unlock()
}

// entry returns env's entry, read again from the store when stale.
func (s *Service) entry(ctx context.Context, env string) (*envEntry, error) {
	now := s.now()
	if e := s.cache.peek(env, now); e != nil {
		return e, nil
	}
	types, err := s.o.Store.WebhookEndpointTypes(ctx, env)
	if err != nil {
		return nil, err
	}
	e := &envEntry{types: types, at: now}
	if len(types) > 0 {
		environment, err := s.o.Store.EnvironmentGetByID(ctx, env)
		if err != nil {
			return nil, err
		}
		e.identifier = environment.Identifier
	}
	s.cache.mu.Lock()
	s.cache.entries[env] = e
	s.cache.mu.Unlock()
	return e, nil
}

// Wants reports whether an event of type typ in the environment would be
// sent to an endpoint now: callers skip building events nobody takes. On a
// failure to read it says yes (the event's write then fails or finds none).
func (s *Service) Wants(ctx context.Context, environmentID, typ string) bool {
	if s == nil {
		return false
	}
	e, err := s.entry(ctx, environmentID)
	return err != nil || e.wants(typ)
}

// signalWake wakes the sender without blocking.
func (s *Service) signalWake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
