package sqlstore

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Recipients remembered between groups. Across a network the read of a
// group's recipients and their preferences (findKnown) is one of the two
// round trips a simple trigger waits for; the other is the group's one
// statement. Where the dialect has a row version (PostgreSQL's xmin, which
// every update of a row changes), findKnown answers from the recipients it
// read before, and the group's statement proves them current: it writes
// only if every subscriber row it planned with still has the version read
// and the preference rows of those subscribers for the group's workflows
// are exactly the ones read (none added, changed or removed). Otherwise it
// writes nothing, and the group is planned again from a fresh read and
// written in a transaction. A remembered recipient can thus save a round
// trip but never change what is written: the group is planned from rows
// that are current when it commits, as with a fresh read.

const (
	// recipientCacheSize bounds the remembered recipients of a process
	// (some MB at most); past it the cache starts over.
	recipientCacheSize = 20_000
	// recipientCacheTTL drops entries not read again for a while, so that
	// a stale entry costs at most one failed statement per this period.
	recipientCacheTTL = time.Minute
)

// recipientEntry is a subscriber as read, with its row version and its
// preference rows for the workflows read ("" is the global one).
type recipientEntry struct {
	sub     store.Subscriber
	version int64
	// prefs holds the preference rows found, by workflow; read the
	// workflows asked for, found or not.
	prefs map[string]prefRow
	read  map[string]bool
	at    time.Time
}

// prefRow is a preference row as read: its channels and version.
type prefRow struct {
	channels map[string]bool
	version  int64
}

// recipientCache holds recipientEntry by environment and subscriberId.
type recipientCache struct {
	mu      sync.Mutex
	entries map[[2]string]*recipientEntry
	// hits counts the recipients planned from memory, afresh those planned
	// again after a group's statement found one changed.
	hits, afresh atomic.Int64
}

// get returns the entry of a subscriber whose preferences for every one of
// workflows were read, or nil.
func (c *recipientCache) get(env, subscriberID string, workflows []string, now time.Time) *recipientEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[[2]string{env, subscriberID}]
	if e == nil || now.Sub(e.at) > recipientCacheTTL {
		return nil
	}
	for _, wf := range workflows {
		if !e.read[wf] {
			return nil
		}
	}
	c.hits.Add(1)
	return e
}

// put remembers a subscriber read with its preferences for workflows.
func (c *recipientCache) put(env string, e *recipientEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= recipientCacheSize {
		c.entries = make(map[[2]string]*recipientEntry)
	}
	c.entries[[2]string{env, e.sub.SubscriberID}] = e
}

// drop forgets the subscribers of calls, after a statement found one of
// them changed.
func (c *recipientCache) drop(calls []*triggerCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, call := range calls {
		for _, r := range call.p.Recipients {
			delete(c.entries, [2]string{call.p.EnvironmentID, r.SubscriberID})
		}
	}
}

// recipientVersions are the row versions a call was planned with: its
// subscribers' (by _id) and the preference rows of each (subscriber _id,
// workflow) pair it read, 0 where it found none.
type recipientVersions struct {
	subs  map[string]int64
	prefs map[[2]string]int64
}

// merge adds v's versions to the group's; ok is false when the group holds
// another version of the same row (planned from two reads).
func (g *recipientVersions) merge(v *recipientVersions) (ok bool) {
	if g.subs == nil {
		g.subs, g.prefs = map[string]int64{}, map[[2]string]int64{}
	}
	for id, ver := range v.subs {
		if old, seen := g.subs[id]; seen && old != ver {
			return false
		}
		g.subs[id] = ver
	}
	for k, ver := range v.prefs {
		if old, seen := g.prefs[k]; seen && old != ver {
			return false
		}
		g.prefs[k] = ver
	}
	return true
}

// choicesOf returns a subscriber's channel choices for a workflow from an
// entry.
func (e *recipientEntry) choicesOf(workflow string) store.ChannelChoices {
	return store.ChannelChoices{Global: maps.Clone(e.prefs[""].channels), Workflow: maps.Clone(e.prefs[workflow].channels)}
}
