package sqlstore

import (
	"sync"
	"time"
)

// Hot reads that every request repeats — the API key of the caller, the
// workflow a trigger names — are kept for a moment. A change made through
// this store clears them at once; a change made by another process (another
// API node, the CLI) takes effect within the TTL.
const (
	apiKeyCacheTTL   = 2 * time.Second
	workflowCacheTTL = time.Second
	maxCacheEntries  = 10000
)

type cacheEntry[V any] struct {
	v  V
	at time.Time
}

// ttlCache is a small map whose entries expire.
type ttlCache[V any] struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[string]cacheEntry[V]
}

func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || now.Sub(e.at) >= c.ttl || now.Before(e.at) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(key string, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCacheEntries {
		c.m = map[string]cacheEntry[V]{}
	}
	c.m[key] = cacheEntry[V]{v: v, at: now}
}

func (c *ttlCache[V]) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
