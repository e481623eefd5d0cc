package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// Group commit. Triggers that arrive while others are being written wait
// for the next group: one committer takes every trigger waiting at that
// moment (up to maxGroupTriggers, or maxGroupJobs rows of jobs) and writes
// them in one transaction with multi-row statements — on PostgreSQL five
// round trips for the group whatever its size (begin, claim the
// transactionIds, find the recipients, insert notifications, jobs and
// details, commit). Nothing waits on a timer: under light load a group is
// one trigger, written at once; under heavy load groups grow with the queue.
// Each caller is answered after the commit that holds its trigger. When a
// group fails, its triggers are written again one at a time, so one bad
// trigger fails alone.

const (
	maxGroupTriggers = 128
	maxGroupJobs     = 2048
	// groupTimeout bounds a group's planning and its transaction: the
	// group's callers have contexts of their own, but the group is theirs
	// together (groupContext).
	groupTimeout = time.Minute
	// groupGrace is the least time a group is given, whatever its callers'
	// deadlines: one near its deadline does not doom the others.
	groupGrace = 500 * time.Millisecond
)

// groupContext is the context of a group's planning and writing: it ends
// at its callers' earliest deadline (at least groupGrace from now, at most
// groupTimeout), so that a group stuck on a database that stopped
// answering is given up while its callers still wait for an answer. Calls
// without deadlines (tools, tests) leave groupTimeout.
func groupContext(calls []*triggerCall) (context.Context, context.CancelFunc) {
	now := time.Now()
	end := now.Add(groupTimeout)
	for _, c := range calls {
		if dl, ok := c.ctx.Deadline(); ok && dl.Before(end) {
			end = dl
		}
	}
	if least := now.Add(groupGrace); end.Before(least) {
		end = least
	}
	return context.WithDeadline(context.Background(), end)
}

var errClosed = errors.New("sqlstore: store closed")

// triggerCall is one trigger waiting for the group that writes it.
type triggerCall struct {
	ctx  context.Context
	p    *store.TriggerParams
	res  store.TriggerResult
	err  error
	done chan struct{}
	// versions are the row versions of the recipients the call was
	// planned with (recipient_cache.go), nil where the dialect has none;
	// remembered, whether one of them was not read for this group.
	versions   *recipientVersions
	remembered bool
}

// triggerQueue hands triggers to the committers, started on first use.
type triggerQueue struct {
	once sync.Once
	in   chan *triggerCall
	stop chan struct{}
	wg   sync.WaitGroup
}

func (q *triggerQueue) start(db *DB) {
	q.once.Do(func() {
		q.in, q.stop = make(chan *triggerCall), make(chan struct{})
		// A committer is two goroutines: one forms and plans the next group
		// while the other writes the last. On PostgreSQL next to the
		// database, too, fewer and larger groups win: with a committer per
		// CPU (2) the same load made groups of ~8 and 1,000–1,080 msgs/s
		// (trigger→feed p99 75 ms), with one 1,200–1,210 msgs/s (50 ms),
		// with 3 about 900.
		//
		// Where the database is across a network, one committer spends most
		// of its time waiting on round trips (the planner's reads, the
		// group's statements): PostgreSQL then runs several
		// (TriggerWriters), each forming, planning and writing groups of its
		// own from the same queue. Groups of one transactionId in two
		// committers never race: the second group's claim of the
		// transactionId waits for the first's commit.
		lanes := max(1, db.TriggerWriters())
		q.wg.Add(2 * lanes)
		for range lanes {
			planned := make(chan []*triggerCall)
			go func() {
				defer q.wg.Done()
				defer close(planned)
				db.commitTriggers(planned)
			}()
			go func() {
				defer q.wg.Done()
				for group := range planned {
					db.writeGroup(group)
				}
			}()
		}
		db.closers = append([]func() error{q.close}, db.closers...)
	})
}

// close stops the committers once their groups are written.
func (q *triggerQueue) close() error {
	close(q.stop)
	q.wg.Wait()
	return nil
}

// Trigger implements store.Pipeline.
func (db *DB) Trigger(ctx context.Context, p *store.TriggerParams) (store.TriggerResult, error) {
	out := db.TriggerMany(ctx, []*store.TriggerParams{p})
	return out[0].Result, out[0].Err
}

// TriggerMany implements store.Pipeline: the events join the groups being
// formed, and each is answered once the commit that holds it is done.
func (db *DB) TriggerMany(ctx context.Context, ps []*store.TriggerParams) []store.TriggerOutcome {
	db.triggers.start(db)
	calls := make([]*triggerCall, len(ps))
	for i, p := range ps {
		c := &triggerCall{ctx: ctx, p: p, done: make(chan struct{})}
		calls[i] = c
		select {
		case db.triggers.in <- c:
		case <-ctx.Done():
			c.finish(store.TriggerResult{}, ctx.Err())
		case <-db.triggers.stop:
			c.finish(store.TriggerResult{}, errClosed)
		}
	}
	out := make([]store.TriggerOutcome, len(calls))
	for i, c := range calls {
		<-c.done // a group once started is answered, whatever ctx does
		out[i] = store.TriggerOutcome{Result: c.res, Err: c.err}
	}
	return out
}

func (c *triggerCall) finish(res store.TriggerResult, err error) {
	c.res, c.err = res, err
	close(c.done)
}

type txKey struct{ env, tx string }

// commitTriggers forms and plans groups and hands them to their writer
// until the store closes. A trigger whose transactionId is already in the
// forming group waits for the next, where it is found a duplicate (or
// written, if the first failed): the writer writes groups in order.
func (db *DB) commitTriggers(planned chan<- []*triggerCall) {
	q := &db.triggers
	var carry []*triggerCall
	defer func() {
		for _, c := range carry {
			c.finish(store.TriggerResult{}, errClosed)
		}
	}()
	for {
		var group []*triggerCall
		keys := map[txKey]bool{}
		jobs := 0
		add := func(c *triggerCall) bool {
			k := txKey{c.p.EnvironmentID, c.p.TransactionID}
			if keys[k] {
				carry = append(carry, c)
				return true
			}
			n := len(c.p.Recipients) * len(c.p.Workflow.Steps)
			if len(group) > 0 && jobs+n > maxGroupJobs {
				carry = append(carry, c)
				return false
			}
			keys[k], jobs = true, jobs+n
			group = append(group, c)
			return true
		}
		pending := carry
		carry = nil
		for i, c := range pending {
			if len(group) == maxGroupTriggers {
				carry = append(carry, pending[i:]...)
				break
			}
			if !add(c) {
				carry = append(carry, pending[i+1:]...)
				break
			}
		}
		if len(group) == 0 {
			select {
			case c := <-q.in:
				add(c)
			case <-q.stop:
				return
			}
		}
		open := func() bool { return len(group) < maxGroupTriggers && len(carry) == 0 }
		drain := func() {
			for open() {
				select {
				case c := <-q.in:
					if !add(c) {
						return
					}
				default:
					return
				}
			}
		}
		drain()
		live := db.planGroup(group)
		// While the writer is busy, the group keeps taking (and planning)
		// the triggers that arrive.
		for len(live) > 0 {
			in := q.in
			if !open() {
				in = nil
			}
			select {
			case planned <- live:
				live = nil
			case c := <-in:
				n := len(group)
				if add(c) {
					drain()
				}
				live = append(live, db.planGroup(group[n:])...)
			}
		}
	}
}

// SetTriggerPlanner implements store.Pipeline.
func (db *DB) SetTriggerPlanner(fn func(ctx context.Context, ps []*store.TriggerParams)) {
	db.planner.Store(&fn)
}

// plan runs the trigger planner over the triggers of a group not planned
// yet, before the group's transaction: its reads and templates run once a
// group, never inside a write transaction. A panic leaves them unplanned.
func (db *DB) plan(calls []*triggerCall) {
	fn := db.planner.Load()
	if fn == nil || *fn == nil {
		return
	}
	ps := make([]*store.TriggerParams, 0, len(calls))
	for _, c := range calls {
		if c.p.InApp == nil {
			ps = append(ps, c.p)
		}
	}
	if len(ps) == 0 {
		return
	}
	ctx, cancel := groupContext(calls)
	defer cancel()
	defer func() {
		if recover() != nil {
			for _, p := range ps {
				p.InApp = nil
			}
		}
	}()
	(*fn)(ctx, ps)
}

// planGroup answers the calls whose callers have gone and plans the others.
func (db *DB) planGroup(group []*triggerCall) []*triggerCall {
	live := group[:0:0]
	for _, c := range group {
		if err := c.ctx.Err(); err != nil {
			c.finish(store.TriggerResult{}, err) // its caller has gone; nothing was written
			continue
		}
		live = append(live, c)
	}
	if len(live) > 0 {
		db.findKnown(live)
		db.plan(live)
	}
	return live
}

// findKnown looks the group's recipients up before its transaction, with
// their channel preferences for the groups' workflows — one statement per
// environment from the read pool, while the previous group is being
// written: the transaction then spends no round trip on them, nor the
// in-app planner on their preferences. Where the dialect has row versions
// the recipients read before are remembered (recipient_cache.go) and the
// versions planned with are kept on the call for the group's statement to
// check. A failed read leaves them to the transaction and the planner.
func (db *DB) findKnown(calls []*triggerCall) { db.lookUpKnown(calls, true) }

// lookUpKnown is findKnown, answering from the remembered recipients when
// remembered is true.
func (db *DB) lookUpKnown(calls []*triggerCall, remembered bool) {
	type envIDs struct {
		ids, workflows []string
		seenWF         map[string]bool
	}
	caching := db.d.rowVersion != ""
	// Only a group that may be written as one statement, the one that
	// checks the versions, plans with remembered recipients.
	remembered = remembered && caching && !slices.ContainsFunc(calls, func(c *triggerCall) bool { return !simpleCandidate(c.p) })
	hits := map[[2]string]bool{}
	byEnv := map[string]*envIDs{}
	var envs []string
	for _, c := range calls {
		p := c.p
		if p.Known != nil {
			continue
		}
		e := byEnv[p.EnvironmentID]
		if e == nil {
			e = &envIDs{workflows: []string{""}, seenWF: map[string]bool{"": true}}
			byEnv[p.EnvironmentID] = e
			envs = append(envs, p.EnvironmentID)
		}
		if !e.seenWF[p.Workflow.ID] {
			e.seenWF[p.Workflow.ID] = true
			e.workflows = append(e.workflows, p.Workflow.ID)
		}
		for _, r := range p.Recipients {
			if r.Upsert == nil {
				e.ids = append(e.ids, r.SubscriberID)
			}
		}
	}
	ctx, cancel := groupContext(calls)
	defer cancel()
	now := time.Now()
	found := make(map[string]map[string]store.Subscriber, len(envs))
	prefs := map[[2]string]map[string]bool{} // (subscriber _id, workflow) → channels
	ver := &recipientVersions{subs: map[string]int64{}, prefs: map[[2]string]int64{}}
	for _, env := range envs {
		e := byEnv[env]
		misses := e.ids
		if remembered {
			misses = nil
			known := found[env]
			if known == nil {
				known = map[string]store.Subscriber{}
				found[env] = known
			}
			for _, id := range e.ids {
				entry := db.recipients.get(env, id, e.workflows, now)
				if entry == nil {
					misses = append(misses, id)
					continue
				}
				known[id], ver.subs[entry.sub.ID], hits[[2]string{env, id}] = entry.sub, entry.version, true
				for wf, row := range entry.prefs {
					prefs[[2]string{entry.sub.ID, wf}], ver.prefs[[2]string{entry.sub.ID, wf}] = row.channels, row.version
				}
			}
		}
		if len(misses) == 0 {
			continue
		}
		if err := db.subscribersWithPreferences(ctx, env, misses, e.workflows, found, prefs, ver); err != nil {
			return
		}
		if !caching {
			continue
		}
		for _, id := range misses {
			s, ok := found[env][id]
			if !ok {
				continue
			}
			entry := &recipientEntry{sub: s, version: ver.subs[s.ID], prefs: map[string]prefRow{}, read: map[string]bool{}, at: now}
			for _, wf := range e.workflows {
				entry.read[wf] = true
				if ch, ok := prefs[[2]string{s.ID, wf}]; ok {
					entry.prefs[wf] = prefRow{channels: ch, version: ver.prefs[[2]string{s.ID, wf}]}
				}
			}
			db.recipients.put(env, entry)
		}
	}
	for _, c := range calls {
		p := c.p
		if p.Known != nil {
			continue
		}
		mine := make(map[string]store.Subscriber, len(p.Recipients))
		choices := map[string]store.ChannelChoices{}
		var v *recipientVersions
		if caching {
			v = &recipientVersions{subs: map[string]int64{}, prefs: map[[2]string]int64{}}
		}
		for _, r := range p.Recipients {
			s, ok := found[p.EnvironmentID][r.SubscriberID]
			if !ok || r.Upsert != nil {
				continue
			}
			mine[r.SubscriberID] = s
			c.remembered = c.remembered || hits[[2]string{p.EnvironmentID, r.SubscriberID}]
			ch := store.ChannelChoices{Global: prefs[[2]string{s.ID, ""}], Workflow: prefs[[2]string{s.ID, p.Workflow.ID}]}
			if ch.Global != nil || ch.Workflow != nil {
				choices[s.ID] = ch
			}
			if v != nil {
				v.subs[s.ID] = ver.subs[s.ID]
				for _, wf := range []string{"", p.Workflow.ID} {
					v.prefs[[2]string{s.ID, wf}] = ver.prefs[[2]string{s.ID, wf}] // 0: none found
				}
			}
		}
		p.Known, p.KnownChoices, c.versions = mine, choices, v
	}
}

// planAfresh plans calls again from a fresh read of their recipients: the
// group's statement found a remembered one changed (or a transactionId
// used), and the transaction that follows must not write what was planned
// from it.
func (db *DB) planAfresh(calls []*triggerCall) {
	db.recipients.drop(calls)
	db.recipients.afresh.Add(int64(len(calls)))
	for _, c := range calls {
		c.p.Known, c.p.KnownChoices, c.p.InApp, c.versions, c.remembered = nil, nil, nil, nil, false
	}
	db.lookUpKnown(calls, false)
	db.plan(calls)
}

// subscribersWithPreferences reads the subscribers of an environment by
// subscriberId with their preferences for the workflows ("" is the global
// one), into found and prefs, and their row versions into ver.
func (db *DB) subscribersWithPreferences(ctx context.Context, env string, ids, workflows []string,
	found map[string]map[string]store.Subscriber, prefs map[[2]string]map[string]bool, ver *recipientVersions) error {
	cols := strings.Split(subscriberCols, ", ")
	for i := range cols {
		cols[i] = "s." + strings.TrimSpace(cols[i])
	}
	versions := ", 0, 0"
	if db.d.rowVersion != "" {
		versions = ", s." + db.d.rowVersion + ", p." + db.d.rowVersion
	}
	known := found[env]
	if known == nil {
		known = make(map[string]store.Subscriber, len(ids))
		found[env] = known
	}
	for start := 0; start < len(ids); start += db.d.rowsPerStatement {
		a := args{env}
		q := "SELECT " + strings.Join(cols, ", ") + ", p.workflow_id, p.channels" + versions + " FROM subscribers s" +
			" LEFT JOIN subscriber_preferences p ON p.subscriber_id = s.id AND " + db.inList(&a, "p.workflow_id", workflows) +
			" WHERE s.environment_id = $1 AND " + db.inList(&a, "s.subscriber_id", ids[start:min(start+db.d.rowsPerStatement, len(ids))]) +
			" AND s.deleted = false"
		rows, err := db.r.QueryContext(ctx, q, db.planned(a)...)
		if err := eachRow(rows, err, func(r rowScanner) error {
			var wf, channels sql.NullString
			var sv, pv sql.NullInt64
			s, err := scanSubscriber(withExtra{r, []any{&wf, &channels, &sv, &pv}})
			if err != nil {
				return err
			}
			known[s.SubscriberID], ver.subs[s.ID] = s, sv.Int64
			if wf.Valid && channels.Valid {
				var ch map[string]bool
				if err := json.Unmarshal([]byte(channels.String), &ch); err != nil {
					return fmt.Errorf("sqlstore: preference channels: %w", err)
				}
				prefs[[2]string{s.ID, wf.String}], ver.prefs[[2]string{s.ID, wf.String}] = ch, pv.Int64
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// withExtra scans a row's leading columns into the caller's destinations
// and the rest into extra.
type withExtra struct {
	r     rowScanner
	extra []any
}

func (w withExtra) Scan(dest ...any) error { return w.r.Scan(append(dest, w.extra...)...) }

// writeGroup writes a planned group in one transaction, or, when that
// fails, each of its triggers in a transaction of its own.
func (db *DB) writeGroup(live []*triggerCall) {
	results, err := db.writeTriggers(live)
	if err != nil && len(live) > 1 {
		for _, c := range live {
			res, err := db.writeTriggers([]*triggerCall{c})
			if err != nil {
				c.finish(store.TriggerResult{}, err)
				continue
			}
			c.finish(res[0], nil)
		}
		return
	}
	for i, c := range live {
		if err != nil {
			c.finish(store.TriggerResult{}, err)
			continue
		}
		c.finish(results[i], nil)
	}
}

// writeTriggers writes the triggers of calls in one transaction.
func (db *DB) writeTriggers(calls []*triggerCall) (results []store.TriggerResult, err error) {
	ctx, cancel := groupContext(calls)
	defer cancel()
	defer func() {
		if p := recover(); p != nil { // never leave the callers waiting
			results, err = nil, fmt.Errorf("sqlstore: trigger group: panic: %v", p)
		}
		// The group's time (its callers' earliest deadline) ran out: the
		// database did not answer in time, for every caller of the group
		// — also one whose own deadline is later.
		if err != nil && ctx.Err() != nil && !errors.Is(err, store.ErrUnavailable) {
			err = fmt.Errorf("%w: the trigger group ran out of time: %w", store.ErrUnavailable, err)
		}
	}()
	if db.simpleGroup(calls) {
		var ok bool
		if results, ok, err = db.writeSimpleGroup(ctx, calls); err != nil || ok {
			if err == nil && slices.ContainsFunc(results, store.TriggerResult.LeftWork) {
				db.notifyJobs()
			}
			return results, err
		}
		// A transactionId was used before, or a remembered recipient
		// changed: the transaction tells which transactionIds.
	}
	// What was planned from remembered recipients is planned again from a
	// fresh read: only the one statement checks their versions.
	var remembered []*triggerCall
	for _, c := range calls {
		if c.remembered {
			remembered = append(remembered, c)
		}
	}
	if len(remembered) > 0 {
		db.planAfresh(remembered)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		results = make([]store.TriggerResult, len(calls))
		claimed, err := db.claimTransactions(ctx, tx, calls)
		if err != nil {
			return err
		}
		g := &triggerGroup{db: db, tx: tx}
		var live []int
		for i, c := range calls {
			if !claimed[txKey{c.p.EnvironmentID, c.p.TransactionID}] {
				results[i].Duplicate = true
				continue
			}
			live = append(live, i)
		}
		if err := g.findRecipients(ctx, calls, live); err != nil {
			return err
		}
		inApp := make([][]*store.JobOutcome, len(calls))
		for _, i := range live {
			if results[i].Notifications, inApp[i], err = g.notifications(ctx, calls[i].p); err != nil {
				return err
			}
		}
		if err := g.placeAndAdd(ctx, calls, live, results, inApp); err != nil {
			return err
		}
		if err := db.insertGroupRows(ctx, tx, g.rows, g.msgs); err != nil {
			return err
		}
		for _, i := range live {
			p := calls[i].p
			if len(p.Topics) == 0 && !p.Broadcast {
				continue
			}
			direct := make([]string, 0, len(results[i].Notifications))
			for _, n := range results[i].Notifications {
				direct = append(direct, n.SubscriberID)
			}
			if results[i].FanoutJobID, results[i].MissingTopics, err = db.insertFanout(ctx, tx, p, direct); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(results, store.TriggerResult.LeftWork) {
		db.notifyJobs()
	}
	return results, nil
}

// claimTransactions inserts the transactionIds of calls and returns those
// that were new (the others were used before: duplicates).
func (db *DB) claimTransactions(ctx context.Context, tx *sql.Tx, calls []*triggerCall) (map[txKey]bool, error) {
	claimed := make(map[txKey]bool, len(calls))
	for start := 0; start < len(calls); start += db.rowsPerStatement() {
		chunk := calls[start:min(start+db.rowsPerStatement(), len(calls))]
		rows := make([][]any, len(chunk))
		for i, c := range chunk {
			rows[i] = []any{c.p.EnvironmentID, c.p.TransactionID, c.p.Workflow.ID, ms(c.p.Now)}
		}
		var a args
		src, err := db.d.rowSource(&a, rows, transactionTypes)
		if err != nil {
			return nil, err
		}
		// "WHERE true" tells SQLite's parser that ON CONFLICT is the upsert's.
		res, err := tx.QueryContext(ctx, "INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at)"+
			" SELECT * FROM ("+src+") v WHERE true ON CONFLICT DO NOTHING RETURNING environment_id, transaction_id", a...)
		keys, err := scanAll(res, err, func(r rowScanner) (txKey, error) {
			var k txKey
			return k, r.Scan(&k.env, &k.tx)
		})
		if err != nil {
			return nil, fmt.Errorf("sqlstore: claim transactions: %w", err)
		}
		for _, k := range keys {
			claimed[k] = true
		}
	}
	return claimed, nil
}

// transactionTypes are the column types of a transactions row.
var transactionTypes = []string{"TEXT", "TEXT", "TEXT", "BIGINT"}

// triggerGroup is the state of a group being written.
type triggerGroup struct {
	db *DB
	tx *sql.Tx
	// known are the recipients found, by environment then subscriberId.
	known map[string]map[string]store.Subscriber
	rows  triggerRows
	// msgs are the messages of the first steps run at trigger time.
	msgs []*store.Message
}

// findRecipients loads the recipients named by subscriberId alone, one
// statement per environment (and chunk).
func (g *triggerGroup) findRecipients(ctx context.Context, calls []*triggerCall, live []int) error {
	ids := map[string][]string{}
	var envs []string
	for _, i := range live {
		p := calls[i].p
		if _, ok := ids[p.EnvironmentID]; !ok {
			envs = append(envs, p.EnvironmentID)
			ids[p.EnvironmentID] = nil
		}
		for _, r := range p.Recipients {
			if r.Upsert == nil {
				ids[p.EnvironmentID] = append(ids[p.EnvironmentID], r.SubscriberID)
			}
		}
	}
	g.known = make(map[string]map[string]store.Subscriber, len(envs))
	all := true
	for _, i := range live {
		all = all && calls[i].p.Known != nil
	}
	if all { // found before the transaction (findKnown)
		for _, i := range live {
			p := calls[i].p
			if g.known[p.EnvironmentID] == nil {
				g.known[p.EnvironmentID] = map[string]store.Subscriber{}
			}
			maps.Copy(g.known[p.EnvironmentID], p.Known)
		}
		return nil
	}
	for _, env := range envs {
		known, err := g.db.subscribersBySubscriberID(ctx, g.tx, env, ids[env])
		if err != nil {
			return err
		}
		g.known[env] = known
	}
	return nil
}

// notifications builds the notifications of one trigger, upserting the
// recipients that asked for it or were not found, and returns with them the
// first-step outcomes planned at trigger time that still apply (same index;
// nil where a worker runs the step).
func (g *triggerGroup) notifications(ctx context.Context, p *store.TriggerParams) ([]store.Notification, []*store.JobOutcome, error) {
	channels := make([]string, 0, len(p.Workflow.Steps))
	for _, s := range p.Workflow.Steps {
		channels = append(channels, s.Type)
	}
	known := g.known[p.EnvironmentID]
	out := make([]store.Notification, 0, len(p.Recipients))
	var inApp []*store.JobOutcome
	for k, rcp := range p.Recipients {
		sub, ok := known[rcp.SubscriberID]
		if !ok || rcp.Upsert != nil {
			var err error
			if sub, err = g.db.triggerSubscriber(ctx, g.tx, p, rcp); err != nil {
				return nil, nil, err
			}
			known[sub.SubscriberID] = sub
		}
		var planned *store.JobOutcome
		if k < len(p.InApp) && p.InApp[k] != nil && p.InApp[k].Job.SubscriberID == sub.ID {
			planned = p.InApp[k]
		}
		n := store.Notification{
			ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID,
			WorkflowID: p.Workflow.ID, SubscriberID: sub.ID, TransactionID: p.TransactionID, Payload: p.Payload,
			Overrides: p.Overrides, Actor: p.Actor, Tags: p.Tags, Channels: channels, CreatedAt: p.Now, UpdatedAt: p.Now,
			Contexts: p.Contexts, ContextKeys: p.ContextKeys,
		}
		n.To, _ = json.Marshal(map[string]any{"subscriberId": sub.SubscriberID})
		if planned != nil {
			n.ID = planned.Job.NotificationID
		}
		out = append(out, n)
		inApp = append(inApp, planned)
	}
	return out, inApp, nil
}

// placeAndAdd places every digest planned at trigger time in the group in
// one pass (so that an event sees a window another trigger of the group
// opened), then adds each notification's rows.
func (g *triggerGroup) placeAndAdd(ctx context.Context, calls []*triggerCall, live []int, results []store.TriggerResult,
	inApp [][]*store.JobOutcome) error {
	var plans []*store.DigestJoinParams
	for _, i := range live {
		p := calls[i].p
		for k, n := range results[i].Notifications {
			if p.DigestPlans != nil {
				plans = append(plans, triggerDigestPlan(p, p.DigestPlans[k], n))
			} else {
				plans = append(plans, nil)
			}
		}
	}
	places, err := g.db.placeTriggerDigests(ctx, g.tx, plans)
	if err != nil {
		return err
	}
	at := 0
	for _, i := range live {
		for k, n := range results[i].Notifications {
			plan, place := plans[at], places[at]
			at++
			if plan != nil && place.outcome == store.DigestMerged {
				n.DigestedNotificationID = place.leaderNotificationID
				results[i].Notifications[k] = n
			}
			o := inApp[i][k]
			if j, ok := triggerFinished(plan, place, o); ok {
				results[i].Finished = append(results[i].Finished, j)
			}
			waiting := g.rows.waiting
			g.rows.add(calls[i].p, n, plan, place, o)
			results[i].Jobs += g.rows.waiting - waiting
			if o != nil {
				g.msgs = append(g.msgs, o.Messages...)
			}
		}
	}
	return nil
}

// insertTriggerRows writes a group's (or a fan-out batch's) notifications,
// jobs and details: on PostgreSQL in one statement (data-modifying CTEs over
// unnest: the same statement for any number of rows), on SQLite a chunk per
// statement.
// insertGroupRows writes a group's rows and the messages of the in-app
// steps run with it, with their inbox counts. On PostgreSQL that is ONE
// statement of data-modifying CTEs — a round trip instead of three, which
// counts where the database is across a network; the messages are new
// (their jobs were made with them), so every one counts.
func (db *DB) insertGroupRows(ctx context.Context, tx *sql.Tx, rows triggerRows, msgs []*store.Message) error {
	if db.d.name != "postgres" || len(msgs) == 0 {
		if err := db.insertTriggerRows(ctx, tx, rows); err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
		var counts pendingCounts
		if err := db.insertMessages(ctx, tx, msgs, &counts); err != nil {
			return err
		}
		return db.applyCounts(ctx, tx, &counts)
	}
	var a args
	inserts, counts, err := db.groupStatements(&a, rows, msgs)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, withCTEs(inserts), a...); err != nil {
		return fmt.Errorf("sqlstore: trigger: %w", err)
	}
	noteInboxChanges(tx, counts)
	return nil
}

// groupStatements are the PostgreSQL statements of a group's rows, the
// messages of its in-app steps and their inbox counts, and those counts.
func (db *DB) groupStatements(a *args, rows triggerRows, msgs []*store.Message) ([]string, *pendingCounts, error) {
	inserts, err := db.triggerInserts(a, rows)
	if err != nil {
		return nil, nil, err
	}
	counts := &pendingCounts{}
	if len(msgs) == 0 {
		return inserts, counts, nil
	}
	mrows := make([][]any, len(msgs))
	for i, m := range msgs {
		mrows[i] = messageValues(m)
		if m.Channel == "in_app" && !m.Deleted {
			counts.add(m)
		}
	}
	src, err := unnestSource(a, mrows, messageTypes)
	if err != nil {
		return nil, nil, err
	}
	inserts = append(inserts, "INSERT INTO messages ("+messageCols+") "+src+" ON CONFLICT DO NOTHING")
	if crows := counts.rows(); len(crows) > 0 {
		vals := make([][]any, len(crows))
		for i, r := range crows {
			vals[i] = []any{r.subscriber, r.state, r.tags, counts.env[r.subscriber], r.n[0], r.n[2], r.n[1], r.n[3]}
		}
		csrc, err := db.d.rowSource(a, vals, countsTypes)
		if err != nil {
			return nil, nil, err
		}
		inserts = append(inserts, countsUpsert(db.d, csrc))
	}
	return inserts, counts, nil
}

// withCTEs joins data-modifying statements into one: the last one's, with
// the others as CTEs before it.
func withCTEs(stmts []string) string {
	stmt := stmts[len(stmts)-1]
	if len(stmts) > 1 {
		ctes := make([]string, len(stmts)-1)
		for i, s := range stmts[:len(stmts)-1] {
			ctes[i] = fmt.Sprintf("w%d AS (%s)", i, s)
		}
		stmt = "WITH " + strings.Join(ctes, ", ") + " " + stmt
	}
	return stmt
}

// triggerInserts are the PostgreSQL inserts of a group's notifications,
// jobs and execution details.
func (db *DB) triggerInserts(a *args, rows triggerRows) ([]string, error) {
	var inserts []string
	for _, part := range triggerParts(rows) {
		if len(part.rows) == 0 {
			continue
		}
		ins, err := db.insertFrom(a, part.table, part.cols, part.rows, part.types)
		if err != nil {
			return nil, err
		}
		inserts = append(inserts, ins)
	}
	return inserts, nil
}

type triggerPart struct {
	table, cols string
	rows        [][]any
	types       []string
}

func triggerParts(rows triggerRows) []triggerPart {
	return []triggerPart{{"notifications", notificationCols, rows.notifications, notificationTypes},
		{"jobs", jobCols, rows.jobs, jobTypes}, {"execution_details", detailCols, rows.details, detailTypes}}
}

func (db *DB) insertTriggerRows(ctx context.Context, tx *sql.Tx, rows triggerRows) error {
	if db.d.name == "postgres" {
		var a args
		inserts, err := db.triggerInserts(&a, rows)
		if err != nil || len(inserts) == 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, withCTEs(inserts), a...); err != nil {
			return fmt.Errorf("sqlstore: trigger: %w", err)
		}
		return nil
	}
	parts := triggerParts(rows)
	for _, part := range parts {
		if err := db.insertRows(ctx, tx, part.table, part.cols, part.rows); err != nil {
			return err
		}
	}
	return nil
}
