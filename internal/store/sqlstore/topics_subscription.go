package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/herald-notify/herald/internal/store"
)

// storedPreference is a preference as topic_subscriptions.preferences keeps
// it: rules are resolved to the workflows they named when they were sent.
type storedPreference struct {
	WorkflowID string          `json:"workflowId"`
	Enabled    bool            `json:"enabled"`
	Condition  json.RawMessage `json:"condition,omitempty"`
}

// subscriptionRow is a topic_subscriptions row as the subscription
// operations read it.
type subscriptionRow struct {
	sub          store.TopicSubscription
	subscriberID string // the subscriber's _id
	prefs        []storedPreference
}

const subscriptionRowCols = "id, subscriber_id, identifier, name, preferences, created_at, updated_at"

func scanSubscriptionRow(row interface{ Scan(...any) error }, t store.Topic) (subscriptionRow, error) {
	r := subscriptionRow{sub: store.TopicSubscription{Topic: t}}
	var name, prefs sql.NullString
	var created, updated int64
	if err := row.Scan(&r.sub.ID, &r.subscriberID, &r.sub.Identifier, &name, &prefs, &created, &updated); err != nil {
		return r, err
	}
	if name.Valid {
		r.sub.Name = &name.String
	}
	if prefs.Valid {
		if err := json.Unmarshal([]byte(prefs.String), &r.prefs); err != nil {
			return r, fmt.Errorf("sqlstore: subscription %s preferences: %w", r.sub.ID, err)
		}
	}
	r.sub.CreatedAt, r.sub.UpdatedAt = fromMS(created), fromMS(updated)
	return r, nil
}

// findSubscription reads the subscription ref names (of a subscriber not
// deleted), locked when lock is set.
func (db *DB) findSubscription(ctx context.Context, q querier, ref *store.TopicSubscriptionRef, lock bool) (subscriptionRow, error) {
	t, err := scanTopic(q.QueryRowContext(ctx, "SELECT "+topicCols+" FROM topics WHERE environment_id = $1 AND topic_key = $2",
		ref.EnvironmentID, ref.Key))
	if err != nil {
		return subscriptionRow{}, err
	}
	forUpdate := ""
	if lock {
		forUpdate = db.d.forUpdate
	}
	live := " AND EXISTS (SELECT 1 FROM subscribers s WHERE s.id = topic_subscriptions.subscriber_id AND s.deleted = false)"
	rows, err := q.QueryContext(ctx, "SELECT "+subscriptionRowCols+" FROM topic_subscriptions WHERE topic_id = $1"+
		" AND identifier = $2"+live+" ORDER BY id LIMIT 2"+forUpdate, t.ID, ref.Identifier)
	found, err := scanAll(rows, err, func(r rowScanner) (subscriptionRow, error) { return scanSubscriptionRow(r, t) })
	if err != nil {
		return subscriptionRow{}, err
	}
	switch {
	case len(found) > 1:
		return subscriptionRow{}, store.ErrConflict
	case len(found) == 1:
		return found[0], nil
	case ref.SubscriberID == "" || ref.Identifier == "":
		return subscriptionRow{}, store.ErrNotFound
	}
	r, err := scanSubscriptionRow(q.QueryRowContext(ctx, "SELECT "+subscriptionRowCols+" FROM topic_subscriptions"+
		" WHERE topic_id = $1 AND identifier = '' AND subscriber_id = (SELECT id FROM subscribers"+
		" WHERE environment_id = $2 AND subscriber_id = $3 AND deleted = false)"+forUpdate, t.ID, ref.EnvironmentID, ref.SubscriberID), t)
	return r, notFound(err)
}

// TopicSubscriptionGet implements store.Topics.
func (db *DB) TopicSubscriptionGet(ctx context.Context, ref *store.TopicSubscriptionRef) (store.TopicSubscription, error) {
	r, err := db.findSubscription(ctx, db.r, ref, false)
	if err != nil {
		return store.TopicSubscription{}, err
	}
	return db.subscriptionDetails(ctx, db.r, r)
}

// TopicSubscriptionUpdate implements store.Topics. Sent preferences replace
// the subscription's; rules naming no workflow of the environment add none.
func (db *DB) TopicSubscriptionUpdate(ctx context.Context, p *store.TopicSubscriptionUpdateParams) (store.TopicSubscription, error) {
	var out store.TopicSubscription
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		r, err := db.findSubscription(ctx, tx, &p.TopicSubscriptionRef, true)
		if err != nil {
			return err
		}
		if p.Name.Set {
			r.sub.Name = p.Name.Value
		}
		if p.PreferencesSet {
			if r.prefs, err = db.resolvePreferences(ctx, tx, p.EnvironmentID, p.Preferences); err != nil {
				return err
			}
		}
		var prefs any
		if len(r.prefs) > 0 {
			prefs = marshalText(r.prefs, "[]")
		}
		r.sub.UpdatedAt = p.Now
		if _, err := tx.ExecContext(ctx, "UPDATE topic_subscriptions SET name = $1, preferences = $2, updated_at = $3 WHERE id = $4",
			r.sub.Name, prefs, ms(p.Now), r.sub.ID); err != nil {
			return fmt.Errorf("sqlstore: update subscription: %w", err)
		}
		out, err = db.subscriptionDetails(ctx, tx, r)
		return err
	})
	return out, err
}

// resolvePreferences applies rules to the environment's workflows, oldest
// first: each workflow a rule names gets the first such rule's setting.
func (db *DB) resolvePreferences(ctx context.Context, q querier, environmentID string, rules []store.TopicPreferenceRule) ([]storedPreference, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT "+workflowCols+" FROM workflows WHERE environment_id = $1 AND deleted = false"+
		" ORDER BY created_at, id", environmentID)
	workflows, err := scanAll(rows, err, scanWorkflow)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: workflows: %w", err)
	}
	var out []storedPreference
	for _, w := range workflows {
		i := slices.IndexFunc(rules, func(r store.TopicPreferenceRule) bool {
			return slices.Contains(r.WorkflowIDs, w.ID) || slices.Contains(r.WorkflowIDs, w.Key) ||
				slices.ContainsFunc(r.Tags, func(tag string) bool { return slices.Contains(w.Tags, tag) })
		})
		if i < 0 {
			continue
		}
		enabled := rules[i].Enabled == nil || *rules[i].Enabled
		out = append(out, storedPreference{WorkflowID: w.ID, Enabled: enabled, Condition: json.RawMessage(rules[i].Condition)})
	}
	return out, nil
}

// subscriptionDetails completes a subscription with its subscriber and the
// workflows of its preferences (those of deleted workflows are left out).
func (db *DB) subscriptionDetails(ctx context.Context, q querier, r subscriptionRow) (store.TopicSubscription, error) {
	subs, err := db.subscribersByID(ctx, q, []string{r.subscriberID})
	if err != nil {
		return store.TopicSubscription{}, err
	}
	s, ok := subs[r.subscriberID]
	if !ok {
		return store.TopicSubscription{}, store.ErrNotFound
	}
	out := r.sub
	out.Subscriber = s
	ids := make([]string, len(r.prefs))
	for i, p := range r.prefs {
		ids[i] = p.WorkflowID
	}
	wfs, err := db.workflowsByID(ctx, q, ids)
	if err != nil {
		return store.TopicSubscription{}, err
	}
	out.Preferences = []store.TopicPreference{}
	for _, p := range r.prefs {
		if w, ok := wfs[p.WorkflowID]; ok && !w.Deleted {
			out.Preferences = append(out.Preferences, store.TopicPreference{Workflow: w, Enabled: p.Enabled, Condition: store.JSON(p.Condition)})
		}
	}
	return out, nil
}
