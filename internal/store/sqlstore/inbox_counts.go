package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

// Inbox counts (migrations 0005, 0011) keep, per subscriber, the number of
// in-app messages in each state — read, seen, archived, snoozed and
// severity, 64 states in all — and tag set. A row of inbox_counts holds one
// (archived, snoozed, severity) combination — its "state" column, a code's
// upper four bits — and one tag set (the messages' tags as stored: those of
// the workflow), with the four (read, seen) buckets as columns. Every change
// to a message's state or existence adjusts them in the same transaction,
// so that a count over any combination of those five and of tags is exact
// and costs one read of the subscriber's rows (16 per tag set at most)
// however large the inbox.

// code is a message's place in the counts: bit 0 read, bit 1 seen, bit 2
// archived, bit 3 snoozed, bits 4–5 severity (none, low, medium, high).
type code uint8

const (
	codeRead code = 1 << iota
	codeSeen
	codeArchived
	codeSnoozed
	codeSeverityShift = 4
	codeCount         = 64
)

// codeSQL computes a message row's code in SQL (both dialects).
const codeSQL = "(CASE WHEN read THEN 1 ELSE 0 END + CASE WHEN seen THEN 2 ELSE 0 END" +
	" + CASE WHEN archived THEN 4 ELSE 0 END + CASE WHEN snoozed_until IS NOT NULL THEN 8 ELSE 0 END" +
	" + CASE severity WHEN 'low' THEN 16 WHEN 'medium' THEN 32 WHEN 'high' THEN 48 ELSE 0 END)"

func severityLevel(s string) code {
	if i := slices.Index(store.Severities, s); i > 0 {
		return code(i)
	}
	return 0
}

// codeOf is a message's code.
func codeOf(m *store.Message) code {
	c := severityLevel(m.Severity) << codeSeverityShift
	for _, f := range []struct {
		on  bool
		bit code
	}{{m.Read, codeRead}, {m.Seen, codeSeen}, {m.Archived, codeArchived}, {m.SnoozedUntil != nil, codeSnoozed}} {
		if f.on {
			c |= f.bit
		}
	}
	return c
}

func (c code) has(bit code) bool { return c&bit != 0 }

// state is the inbox_counts row of the code; its lower two bits pick the
// (read, seen) column: unread_unseen, read_unseen, unread_seen, read_seen.
func (c code) state() int      { return int(c >> 2) }
func (c code) severity() int   { return int(c >> codeSeverityShift) }
func stateCode(state int) code { return code(state) << 2 }

// countKey is a counter of a subscriber: a code and a tag set.
type countKey struct {
	c    code
	tags string // the messages' tags column, "[]" for NULL
}

// tagsKey is the tag set of a message as the tags column stores it.
func tagsKey(tags []string) string {
	if tags == nil {
		return "[]"
	}
	return marshalText(tags, "[]")
}

// countDelta is a change to a subscriber's counts.
type countDelta map[countKey]int

// move counts n messages of a tag set moving from one code to another; to
// < 0 removes them.
func (d countDelta) move(from code, to int, tags string, n int) {
	if to >= 0 && code(to) == from {
		return
	}
	d[countKey{from, tags}] -= n
	if to >= 0 {
		d[countKey{code(to), tags}] += n
	}
}

// pendingCounts gathers count changes of a transaction, applied at its end
// in (subscriber, state) order: transactions touching the same subscribers
// then lock their count rows in one order and cannot deadlock.
type pendingCounts struct {
	env    map[string]string
	deltas map[string]countDelta
	// perStatement bounds the rows of one upsert (0: 100).
	perStatement int
	// added are the new messages, for the realtime hook (realtime.go).
	added []addedMessage
}

// addedMessage is a new in-app message of a transaction.
type addedMessage struct{ env, id string }

// add counts a new message.
func (p *pendingCounts) add(m *store.Message) {
	p.delta(m.EnvironmentID, m.SubscriberID)[countKey{codeOf(m), tagsKey(m.Tags)}]++
	p.added = append(p.added, addedMessage{m.EnvironmentID, m.ID})
}

// delta is the change to a subscriber's counts, to add to.
func (p *pendingCounts) delta(environmentID, subscriberID string) countDelta {
	if p.deltas == nil {
		p.env, p.deltas = map[string]string{}, map[string]countDelta{}
	}
	d, ok := p.deltas[subscriberID]
	if !ok {
		d = countDelta{}
		p.deltas[subscriberID], p.env[subscriberID] = d, environmentID
	}
	return d
}

// countsRow is one inbox_counts row (or its change): n by the code's
// lower two bits.
type countsRow struct {
	subscriber string
	state      int
	tags       string
	n          [4]int
}

func (p *pendingCounts) rows() []countsRow {
	var out []countsRow
	for s, d := range p.deltas {
		byRow := map[[2]string]*countsRow{}
		for k, n := range d {
			if n == 0 {
				continue
			}
			key := [2]string{fmt.Sprint(k.c.state()), k.tags}
			r := byRow[key]
			if r == nil {
				r = &countsRow{subscriber: s, state: k.c.state(), tags: k.tags}
				byRow[key] = r
			}
			r.n[k.c&3] += n
		}
		for _, r := range byRow {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b countsRow) int {
		if c := strings.Compare(a.subscriber, b.subscriber); c != 0 {
			return c
		}
		if a.state != b.state {
			return a.state - b.state
		}
		return strings.Compare(a.tags, b.tags)
	})
	return out
}

// applyCounts applies gathered count changes with multi-row upserts (and
// notes the change for the realtime hook, realtime.go), keyed as the
// dialect keys a tag set (dialect.countsConflict).
func (db *DB) applyCounts(ctx context.Context, q querier, p *pendingCounts) error {
	noteInboxChanges(q, p)
	rows := p.rows()
	per := p.perStatement
	if per <= 0 {
		per = 100
	}
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		vals := make([][]any, len(chunk))
		for i, r := range chunk {
			vals[i] = []any{r.subscriber, r.state, r.tags, p.env[r.subscriber], r.n[0], r.n[2], r.n[1], r.n[3]}
		}
		var a args
		src, err := db.d.rowSource(&a, vals, countsTypes)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, countsUpsert(db.d, src), a...); err != nil {
			return fmt.Errorf("sqlstore: inbox counts: %w", err)
		}
	}
	return nil
}

// countsUpsert adds the counts rows of src to inbox_counts.
func countsUpsert(d dialect, src string) string {
	// "WHERE true" tells SQLite's parser that ON CONFLICT is the upsert's.
	return "INSERT INTO inbox_counts (subscriber_id, state, tags, environment_id, unread_unseen," +
		" unread_seen, read_unseen, read_seen) SELECT * FROM (" + src + ") v WHERE true ON CONFLICT " + d.countsConflict +
		" DO UPDATE SET unread_unseen = inbox_counts.unread_unseen + excluded.unread_unseen," +
		" unread_seen = inbox_counts.unread_seen + excluded.unread_seen," +
		" read_unseen = inbox_counts.read_unseen + excluded.read_unseen," +
		" read_seen = inbox_counts.read_seen + excluded.read_seen"
}

// countsTypes are the column types of an inbox_counts row.
var countsTypes = []string{"TEXT", "INTEGER", "TEXT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"}

// subscriberCounts are a subscriber's counters: by state and tag set.
type subscriberCounts []countsRow

// anySnoozed reports whether the counters hold a snoozed message.
func (c subscriberCounts) anySnoozed() bool {
	for _, r := range c {
		if stateCode(r.state).has(codeSnoozed) && r.n != [4]int{} {
			return true
		}
	}
	return false
}

// countsOf reads a subscriber's counts.
func (db *DB) countsOf(ctx context.Context, environmentID, subscriberID string) (subscriberCounts, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT state, tags, unread_unseen, read_unseen, unread_seen, read_seen FROM inbox_counts"+
		" WHERE subscriber_id = $1 AND environment_id = $2", subscriberID, environmentID)
	out, err := scanAll(rows, err, func(s rowScanner) (countsRow, error) {
		var r countsRow
		if err := s.Scan(&r.state, &r.tags, &r.n[0], &r.n[1], &r.n[2], &r.n[3]); err != nil {
			return r, err
		}
		if r.state < 0 || r.state >= codeCount>>2 {
			return r, fmt.Errorf("state %d", r.state)
		}
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlstore: inbox counts: %w", err)
	}
	return out, nil
}

// matches reports whether messages of code c pass the filter's state
// conditions (its other conditions aside).
func (c code) matches(f *store.InboxFilter) bool {
	for _, cond := range []struct {
		want *bool
		bit  code
	}{{f.Read, codeRead}, {f.Seen, codeSeen}, {f.Archived, codeArchived}, {f.Snoozed, codeSnoozed}} {
		if cond.want != nil && *cond.want != c.has(cond.bit) {
			return false
		}
	}
	if len(f.Severity) > 0 && !slices.Contains(f.Severity, store.Severities[c.severity()]) {
		return false
	}
	return true
}

// sumMatching is the count of the messages whose state and tags pass f.
func (counts subscriberCounts) sumMatching(f *store.InboxFilter) int {
	n := 0
	for _, r := range counts {
		if len(f.Tags) > 0 && !tagsMatch(r.tags, f.Tags) {
			continue
		}
		for i := range code(4) {
			if (stateCode(r.state) | i).matches(f) {
				n += r.n[i]
			}
		}
	}
	return n
}

// tagsMatch reports whether a stored tag set has a tag of every group.
func tagsMatch(stored string, groups [][]string) bool {
	var tags []string
	if json.Unmarshal([]byte(stored), &tags) != nil {
		return false
	}
	for _, g := range groups {
		if !slices.ContainsFunc(g, func(t string) bool { return slices.Contains(tags, t) }) {
			return false
		}
	}
	return true
}
