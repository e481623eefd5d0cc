package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

const preferenceCols = "id, environment_id, subscriber_id, workflow_id, channels, created_at, updated_at"

func scanPreference(row interface{ Scan(...any) error }) (store.SubscriberPreference, error) {
	var p store.SubscriberPreference
	var channels string
	var created, updated int64
	if err := row.Scan(&p.ID, &p.EnvironmentID, &p.SubscriberID, &p.WorkflowID, &channels, &created, &updated); err != nil {
		return p, notFound(err)
	}
	if err := json.Unmarshal([]byte(channels), &p.Channels); err != nil {
		return p, fmt.Errorf("sqlstore: preference %s channels: %w", p.ID, err)
	}
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	return p, nil
}

// queryAll runs a query and scans every row it returns with scan.
func queryAll[T any](ctx context.Context, q querier, scan func(rowScanner) (T, error), query string, a ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, a...)
	return scanAll(rows, err, scan)
}

// preferencesOf gathers a subscriber's preference rows.
func preferencesOf(sub store.Subscriber, rows []store.SubscriberPreference) store.SubscriberPreferences {
	out := store.SubscriberPreferences{Subscriber: sub, Workflows: map[string]store.SubscriberPreference{}}
	for _, p := range rows {
		if p.WorkflowID == "" {
			out.Global = &p
		} else {
			out.Workflows[p.WorkflowID] = p
		}
	}
	return out
}

// SubscriberPreferenceGet implements store.Preferences.
func (db *DB) SubscriberPreferenceGet(ctx context.Context, p *store.SubscriberPreferenceGetParams) (store.SubscriberPreferences, error) {
	sub, err := db.SubscriberGet(ctx, p.Scope, p.SubscriberID)
	if err != nil {
		return store.SubscriberPreferences{}, err
	}
	rows, err := queryAll(ctx, db.r, scanPreference, "SELECT "+preferenceCols+" FROM subscriber_preferences WHERE subscriber_id = $1",
		sub.ID)
	if err != nil {
		return store.SubscriberPreferences{}, fmt.Errorf("sqlstore: preferences: %w", err)
	}
	return preferencesOf(sub, rows), nil
}

// SubscriberPreferenceUpdate implements store.Preferences: the subscriber's
// row is locked (concurrent updates of one subscriber apply one after the
// other), its preferences are read, changed in memory, and the rows that
// changed are written.
func (db *DB) SubscriberPreferenceUpdate(ctx context.Context, p *store.SubscriberPreferenceUpdateParams) (store.SubscriberPreferences, error) {
	var out store.SubscriberPreferences
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		sub, err := scanSubscriber(tx.QueryRowContext(ctx, "SELECT "+subscriberCols+" FROM subscribers WHERE environment_id = $1"+
			" AND subscriber_id = $2 AND deleted = false"+db.d.forUpdate, p.EnvironmentID, p.SubscriberID))
		if err != nil {
			return err
		}
		rows, err := queryAll(ctx, tx, scanPreference, "SELECT "+preferenceCols+" FROM subscriber_preferences WHERE subscriber_id = $1",
			sub.ID)
		if err != nil {
			return fmt.Errorf("sqlstore: preferences: %w", err)
		}
		byWorkflow := map[string]*store.SubscriberPreference{}
		for i := range rows {
			byWorkflow[rows[i].WorkflowID] = &rows[i]
		}
		changed := map[string]bool{}
		for _, c := range p.Changes {
			if len(c.Channels) == 0 {
				continue
			}
			if c.WorkflowID == "" {
				// The latest global choice of a channel holds everywhere.
				for wf, pref := range byWorkflow {
					for ch := range c.Channels {
						if _, ok := pref.Channels[ch]; ok && wf != "" {
							delete(pref.Channels, ch)
							changed[wf] = true
						}
					}
				}
			}
			pref, ok := byWorkflow[c.WorkflowID]
			if !ok {
				pref = &store.SubscriberPreference{ID: id.NewAt(p.Now), EnvironmentID: sub.EnvironmentID, SubscriberID: sub.ID,
					WorkflowID: c.WorkflowID, Channels: map[string]bool{}, CreatedAt: p.Now}
				byWorkflow[c.WorkflowID] = pref
			}
			maps.Copy(pref.Channels, c.Channels)
			changed[c.WorkflowID] = true
		}
		if err := db.writePreferences(ctx, tx, byWorkflow, changed, p); err != nil {
			return err
		}
		var kept []store.SubscriberPreference
		for _, pref := range byWorkflow {
			if len(pref.Channels) > 0 {
				kept = append(kept, *pref)
			}
		}
		out = preferencesOf(sub, kept)
		noteResult(tx, out)
		return nil
	})
	return out, err
}

// writePreferences upserts the changed preferences and deletes those left
// without a channel.
func (db *DB) writePreferences(ctx context.Context, tx *sql.Tx, byWorkflow map[string]*store.SubscriberPreference,
	changed map[string]bool, p *store.SubscriberPreferenceUpdateParams) error {
	for wf := range changed {
		pref := byWorkflow[wf]
		pref.UpdatedAt = p.Now
		if len(pref.Channels) == 0 {
			if _, err := tx.ExecContext(ctx, "DELETE FROM subscriber_preferences WHERE subscriber_id = $1 AND workflow_id = $2",
				pref.SubscriberID, wf); err != nil {
				return fmt.Errorf("sqlstore: preferences: %w", err)
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO subscriber_preferences ("+preferenceCols+") VALUES ($1, $2, $3, $4, $5, $6, $7)"+
			" ON CONFLICT (subscriber_id, workflow_id) DO UPDATE SET channels = excluded.channels, updated_at = excluded.updated_at",
			pref.ID, pref.EnvironmentID, pref.SubscriberID, wf, marshalText(pref.Channels, "{}"), ms(pref.CreatedAt),
			ms(pref.UpdatedAt)); err != nil {
			return fmt.Errorf("sqlstore: preferences: %w", err)
		}
	}
	return nil
}

// channelSteps are the step types a subscriber's preferences can turn off.
var channelSteps = map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}

// claimedPreferences loads, in one statement, the preferences of the
// claimed channel jobs' (subscriber, workflow) pairs and the globals of
// their subscribers: the subscribers' rows of those workflows and their
// global rows (workflow_id empty).
// A batch of a fan-out is one workflow and up to a batch of subscribers.
func (db *DB) claimedPreferences(ctx context.Context, jobs []store.Job) (map[[2]string]map[string]bool, error) {
	out := map[[2]string]map[string]bool{}
	var subs []string
	wfs := []string{""}
	seenSub, seenWF := map[string]bool{}, map[string]bool{}
	for _, j := range jobs {
		if !channelSteps[j.Type] {
			continue
		}
		if !seenSub[j.SubscriberID] {
			seenSub[j.SubscriberID] = true
			subs = append(subs, j.SubscriberID)
		}
		if !seenWF[j.WorkflowID] {
			seenWF[j.WorkflowID] = true
			wfs = append(wfs, j.WorkflowID)
		}
	}
	if len(subs) == 0 {
		return out, nil
	}
	var a args
	rows, err := queryAll(ctx, db.r, scanPreference, "SELECT "+preferenceCols+" FROM subscriber_preferences WHERE "+
		db.inList(&a, "subscriber_id", subs)+" AND "+db.inList(&a, "workflow_id", wfs), db.planned(a)...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: claimed preferences: %w", err)
	}
	for _, p := range rows {
		out[[2]string{p.SubscriberID, p.WorkflowID}] = p.Channels
	}
	return out, nil
}

// ChannelChoices implements store.Preferences with the query a claimed
// batch uses (claimedPreferences).
func (db *DB) ChannelChoices(ctx context.Context, p *store.ChannelChoicesParams) (map[string]store.ChannelChoices, error) {
	subscriberIDs, workflowID := p.SubscriberIDs, p.WorkflowID
	jobs := make([]store.Job, len(subscriberIDs))
	for i, s := range subscriberIDs {
		jobs[i] = store.Job{SubscriberID: s, WorkflowID: workflowID, Type: "in_app"}
	}
	prefs, err := db.claimedPreferences(ctx, jobs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.ChannelChoices, len(prefs))
	for _, s := range subscriberIDs {
		c := store.ChannelChoices{Global: prefs[[2]string{s, ""}], Workflow: prefs[[2]string{s, workflowID}]}
		if c.Global != nil || c.Workflow != nil {
			out[s] = c
		}
	}
	return out, nil
}
