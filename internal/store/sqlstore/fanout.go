package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// fanoutState is a fan-out job's fanout column: whom it reaches, who is
// left out, how far it got, and the event it carries to each recipient.
type fanoutState struct {
	Topics    []fanoutTopic `json:"topics,omitempty"`
	Broadcast bool          `json:"broadcast,omitempty"`
	// Skip are the _ids the trigger reached already (named directly) and
	// the actor's.
	Skip []string `json:"skip,omitempty"`
	// After is the cursor: the last _id handled.
	After     string            `json:"after"`
	Payload   json.RawMessage   `json:"payload,omitempty"`
	Overrides json.RawMessage   `json:"overrides,omitempty"`
	Actor     json.RawMessage   `json:"actor,omitempty"`
	Contexts  json.RawMessage   `json:"contexts,omitempty"`
	Keys      string            `json:"contextKeys,omitempty"`
	Tags      []string          `json:"tags"`
	Providers map[string]string `json:"providers"` // step type → provider, as at trigger time
	Created   int               `json:"created"`
}

type fanoutTopic struct {
	ID      string   `json:"id"`
	Key     string   `json:"key"`
	Exclude []string `json:"exclude,omitempty"` // _ids
}

// insertFanout writes the fan-out job of a trigger to topics or a
// broadcast, inside the trigger's transaction. direct are the _ids the
// trigger created notifications for. Topic keys that name no topic are
// returned; when none is left and it is no broadcast, no job is written.
func (db *DB) insertFanout(ctx context.Context, tx *sql.Tx, p *store.TriggerParams, direct []string) (string, []string, error) {
	st := fanoutState{Broadcast: p.Broadcast, Skip: direct, Payload: json.RawMessage(orJSON(p.Payload, "{}")),
		Overrides: json.RawMessage(orJSON(p.Overrides, "{}")), Actor: json.RawMessage(p.Actor), Tags: p.Tags,
		Contexts: json.RawMessage(p.Contexts), Keys: p.ContextKeys, Providers: map[string]string{}}
	if st.Tags == nil {
		st.Tags = []string{}
	}
	for _, s := range p.Workflow.Steps {
		st.Providers[s.Type] = p.ProviderFor(s.Type)
	}
	var lookUp []string
	if p.ActorSubscriberID != "" {
		lookUp = append(lookUp, p.ActorSubscriberID)
	}
	keys := make([]string, 0, len(p.Topics))
	for _, t := range p.Topics {
		keys = append(keys, t.Key)
		lookUp = append(lookUp, t.Exclude...)
	}
	known, err := db.subscribersBySubscriberID(ctx, tx, p.EnvironmentID, lookUp)
	if err != nil {
		return "", nil, err
	}
	if a, ok := known[p.ActorSubscriberID]; ok && p.ActorSubscriberID != "" {
		st.Skip = append(st.Skip, a.ID)
	}
	topics, err := db.topicIDsByKey(ctx, tx, p.EnvironmentID, keys)
	if err != nil {
		return "", nil, err
	}
	var missing []string
	byID := map[string]int{}
	for _, t := range p.Topics {
		tid, ok := topics[t.Key]
		if !ok {
			if !slices.Contains(missing, t.Key) {
				missing = append(missing, t.Key)
			}
			continue
		}
		i, ok := byID[tid]
		if !ok {
			i = len(st.Topics)
			byID[tid] = i
			st.Topics = append(st.Topics, fanoutTopic{ID: tid, Key: t.Key, Exclude: []string{}})
		}
		// A topic named twice excludes what either names: each mention
		// narrows the same fan-out.
		for _, ex := range t.Exclude {
			if s, ok := known[ex]; ok && !slices.Contains(st.Topics[i].Exclude, s.ID) {
				st.Topics[i].Exclude = append(st.Topics[i].Exclude, s.ID)
			}
		}
	}
	if len(st.Topics) == 0 && !st.Broadcast {
		return "", missing, nil
	}
	state, err := json.Marshal(st)
	if err != nil {
		return "", nil, err
	}
	jobID, now := id.NewAt(p.Now), ms(p.Now)
	_, err = tx.ExecContext(ctx, "INSERT INTO jobs ("+jobCols+", fanout) VALUES ($1, $2, $3, '', '', $4, $5, '', 0, $6, '', $7,"+
		" $8, NULL, 0, NULL, NULL, '', 0, $8, $8, $9)", jobID, p.OrganizationID, p.EnvironmentID, p.Workflow.ID,
		p.TransactionID, store.JobFanout, store.JobQueued, now, string(state))
	if err != nil {
		return "", nil, fmt.Errorf("sqlstore: insert fan-out job: %w", err)
	}
	return jobID, missing, nil
}

// topicIDsByKey maps the keys of an environment's topics to their _ids.
func (db *DB) topicIDsByKey(ctx context.Context, q querier, environmentID string, keys []string) (map[string]string, error) {
	if len(keys) == 0 {
		return map[string]string{}, nil
	}
	a := args{environmentID}
	return scanPairs(q.QueryContext(ctx, "SELECT topic_key, id FROM topics WHERE environment_id = $1 AND "+
		db.inList(&a, "topic_key", keys), db.planned(a)...))
}

// FanoutRun implements store.Fanout.
func (db *DB) FanoutRun(ctx context.Context, p *store.FanoutRunParams) (store.FanoutRunResult, error) {
	var res store.FanoutRunResult
	err := db.inTxPipeline(ctx, func(tx *sql.Tx) error {
		res = store.FanoutRunResult{}
		var raw sql.NullString
		err := tx.QueryRowContext(ctx, "SELECT fanout FROM jobs WHERE id = $1 AND status = 'running' AND attempts = $2"+
			db.d.forUpdate, p.Job.ID, p.Job.Attempts).Scan(&raw)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		res.Applied = true
		var st fanoutState
		if err := json.Unmarshal([]byte(raw.String), &st); err != nil {
			return fmt.Errorf("sqlstore: fan-out job %s state: %w", p.Job.ID, err)
		}
		ids, err := db.fanoutNext(ctx, tx, p.Job.EnvironmentID, &st, p.Limit)
		if err != nil {
			return err
		}
		res.Done = len(ids) < p.Limit
		if len(ids) > 0 {
			st.After = ids[len(ids)-1]
		}
		if ids, err = db.fanoutAllowed(ctx, tx, &st, p.Job.WorkflowID, ids); err != nil {
			return err
		}
		if res.Created, err = db.fanoutBatch(ctx, tx, p, &st, ids); err != nil {
			return err
		}
		st.Created += res.Created
		return db.fanoutSave(ctx, tx, p, &st, res.Done)
	})
	if err == nil && res.Created > 0 {
		db.notifyJobs()
	}
	return res, err
}

// fanoutNext returns the next _ids of the fan-out after its cursor, in
// order, at most limit: the members of its topics (each once, whatever
// topics it is in), or every subscriber of the environment. Who is left out
// of a topic is fanoutAllowed's to decide.
func (db *DB) fanoutNext(ctx context.Context, q querier, environmentID string, st *fanoutState, limit int) ([]string, error) {
	var query string
	var a args
	if st.Broadcast {
		a = args{environmentID, st.After}
		query = "SELECT id FROM subscribers WHERE environment_id = $1 AND deleted = false AND id > $2 ORDER BY id LIMIT " +
			strconv.Itoa(limit)
	} else {
		a = args{st.After}
		topicIDs := make([]string, len(st.Topics))
		for i, t := range st.Topics {
			topicIDs[i] = t.ID
		}
		query = "SELECT DISTINCT subscriber_id FROM topic_subscriptions WHERE " + db.inList(&a, "topic_id", topicIDs) +
			" AND subscriber_id > $1 ORDER BY subscriber_id LIMIT " + strconv.Itoa(limit)
	}
	rows, err := q.QueryContext(ctx, query, db.planned(a)...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: fan-out recipients: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		ids = append(ids, v)
	}
	return ids, rows.Err()
}

// fanoutBatch writes the notification and jobs of each of ids that is a
// subscriber of the environment and not to be skipped.
func (db *DB) fanoutBatch(ctx context.Context, tx *sql.Tx, p *store.FanoutRunParams, st *fanoutState, ids []string) (int, error) {
	ids = slices.DeleteFunc(ids, func(v string) bool { return slices.Contains(st.Skip, v) })
	if len(ids) == 0 {
		return 0, nil
	}
	wfs, err := db.workflowsByID(ctx, tx, []string{p.Job.WorkflowID})
	if err != nil {
		return 0, err
	}
	wf, ok := wfs[p.Job.WorkflowID]
	if !ok || wf.Deleted || len(wf.Steps) == 0 {
		return 0, nil // nothing to run: the rest of the fan-out is moot
	}
	subs, err := db.subscriberIDsOf(ctx, tx, p.Job.EnvironmentID, ids)
	if err != nil {
		return 0, err
	}
	channels := make([]string, 0, len(wf.Steps))
	for _, s := range wf.Steps {
		channels = append(channels, s.Type)
	}
	tp := &store.TriggerParams{Workflow: wf, Now: p.Now, ProviderFor: func(t string) string { return st.Providers[t] }}
	var rows triggerRows
	for _, sid := range ids {
		clientID, ok := subs[sid]
		if !ok {
			continue // deleted since it subscribed
		}
		n := store.Notification{
			ID: id.NewAt(p.Now), OrganizationID: p.Job.OrganizationID, EnvironmentID: p.Job.EnvironmentID,
			WorkflowID: wf.ID, SubscriberID: sid, TransactionID: p.Job.TransactionID, Payload: store.JSON(st.Payload),
			Overrides: store.JSON(st.Overrides), Actor: store.JSON(st.Actor), Tags: st.Tags, Channels: channels,
			Contexts: store.JSON(st.Contexts), ContextKeys: st.Keys, CreatedAt: p.Now, UpdatedAt: p.Now,
		}
		n.To, _ = json.Marshal(map[string]any{"subscriberId": clientID})
		rows.add(tp, n, nil, digestPlacement{}, nil)
	}
	if err := db.insertTriggerRows(ctx, tx, rows); err != nil {
		return 0, err
	}
	return len(rows.notifications), nil
}

// subscriberIDsOf maps the _ids of an environment's subscribers that are
// not deleted to their subscriberIds.
func (db *DB) subscriberIDsOf(ctx context.Context, q querier, environmentID string, ids []string) (map[string]string, error) {
	a := args{environmentID}
	return scanPairs(q.QueryContext(ctx, "SELECT id, subscriber_id FROM subscribers WHERE environment_id = $1 AND deleted = false AND "+
		db.inList(&a, "id", ids), db.planned(a)...))
}

// scanPairs reads rows of two text columns into a map from the first to
// the second, closing them.
func scanPairs(rows *sql.Rows, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// fanoutSave writes the fan-out's state: completed when done; otherwise
// leased for another batch, or queued again (Yield) with its attempts
// reset, since a batch that committed is progress, not a failed try.
func (db *DB) fanoutSave(ctx context.Context, tx *sql.Tx, p *store.FanoutRunParams, st *fanoutState, done bool) error {
	state, err := json.Marshal(st)
	if err != nil {
		return err
	}
	now := ms(p.Now)
	var q string
	a := args{string(state), now, p.Job.ID}
	switch {
	case done:
		q = "UPDATE jobs SET fanout = $1, status = 'completed', lease_until = NULL, updated_at = $2 WHERE id = $3"
	case p.Yield:
		q = "UPDATE jobs SET fanout = $1, status = 'queued', lease_until = NULL, run_at = $2, attempts = 0, updated_at = $2 WHERE id = $3"
	default:
		q = "UPDATE jobs SET fanout = $1, lease_until = $4, updated_at = $2 WHERE id = $3"
		a = append(a, ms(p.Now.Add(p.Lease)))
	}
	_, err = tx.ExecContext(ctx, q, a...)
	return err
}

// fanoutCancelRunning marks a transaction's running fan-out jobs canceled.
// On PostgreSQL it waits for a batch in flight to commit, so the statements
// after it (a new snapshot) see that batch's jobs and cancel them too.
func fanoutCancelRunning(ctx context.Context, tx *sql.Tx, environmentID, transactionID string, now time.Time) (int64, error) {
	res, err := tx.ExecContext(ctx, "UPDATE jobs SET status = 'canceled', lease_until = NULL, updated_at = $1"+
		" WHERE environment_id = $2 AND transaction_id = $3 AND type = $4 AND status IN ('queued', 'running')",
		ms(now), environmentID, transactionID, store.JobFanout)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// fanoutAllowed keeps of a topic fan-out's ids the subscribers reached by
// at least one of their subscriptions: in a topic of the fan-out that does
// not exclude them, without a preference turning the workflow off. One
// statement reads the batch's subscriptions.
func (db *DB) fanoutAllowed(ctx context.Context, q querier, st *fanoutState, workflowID string, ids []string) ([]string, error) {
	if st.Broadcast || len(ids) == 0 {
		return ids, nil
	}
	topicIDs := make([]string, len(st.Topics))
	excluded := map[string]bool{} // topic _id + subscriber _id
	for i, t := range st.Topics {
		topicIDs[i] = t.ID
		for _, ex := range t.Exclude {
			excluded[t.ID+"\x00"+ex] = true
		}
	}
	var a args
	rows, err := q.QueryContext(ctx, "SELECT subscriber_id, topic_id, preferences FROM topic_subscriptions WHERE "+
		db.inList(&a, "topic_id", topicIDs)+" AND "+db.inList(&a, "subscriber_id", ids), db.planned(a)...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: fan-out subscription preferences: %w", err)
	}
	defer rows.Close()
	reached := make(map[string]bool, len(ids))
	for rows.Next() {
		var sid, tid string
		var prefs sql.NullString
		if err := rows.Scan(&sid, &tid, &prefs); err != nil {
			return nil, err
		}
		if reached[sid] || excluded[tid+"\x00"+sid] {
			continue
		}
		on, err := subscriptionAllows(prefs, workflowID)
		if err != nil {
			return nil, err
		}
		reached[sid] = on
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ids, func(v string) bool { return !reached[v] }), nil
}

// subscriptionAllows says whether a subscription's stored preferences let
// a workflow through: no preference for it (or none at all) does; one for
// it says by its enabled. Conditions are not evaluated (docs/api-behaviour.md).
func subscriptionAllows(prefs sql.NullString, workflowID string) (bool, error) {
	if !prefs.Valid {
		return true, nil
	}
	var ps []storedPreference
	if err := json.Unmarshal([]byte(prefs.String), &ps); err != nil {
		return false, fmt.Errorf("sqlstore: subscription preferences: %w", err)
	}
	for _, p := range ps {
		if p.WorkflowID == workflowID {
			return p.Enabled, nil
		}
	}
	return true, nil
}
