package engine

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// TriggerReader reads what running a workflow's first step with its
// trigger needs: the recipients and their channel choices for the workflow.
type TriggerReader interface {
	SubscriberReader
	ChannelChoices(ctx context.Context, p *store.ChannelChoicesParams) (map[string]store.ChannelChoices, error)
	EnvironmentVariableValues(ctx context.Context, environmentID string) (map[string]string, error)
}

// InAppPlanner returns the store's trigger planner (store.Pipeline.
// SetTriggerPlanner): for a group of triggers about to be written together,
// it runs the first step of each workflow that starts with an in-app step,
// for each recipient that exists already and that the trigger does not
// create or update — what a worker would do with the job a moment later
// (preferences, templates rendered in the sandbox, the message). The group's
// transaction then writes the notification, the job finished, its message
// and the inbox counts together: the message is in the feed when the
// trigger is acknowledged, and the job never waits for a worker (no claim,
// no second transaction). Its reads are one per environment and workflow of
// the group, from the read pool, before the transaction; the templates run
// there too, never inside it. A recipient left out (or a failed read) keeps
// a queued job as before.
func InAppPlanner(sb *sandbox.Sandbox, r TriggerReader) func(ctx context.Context, ps []*store.TriggerParams) {
	tr, _ := r.(TranslationReader) // the store reads translations and environments too
	envs, _ := r.(EnvironmentReader)
	return func(ctx context.Context, ps []*store.TriggerParams) {
		type wfKey struct{ env, workflow string }
		ids := map[string][]string{}
		scopes := map[string]store.Scope{}
		known := map[string]map[string]store.Subscriber{}
		for _, p := range ps {
			if !startsInApp(p) {
				continue
			}
			scopes[p.EnvironmentID] = p.Scope
			if p.Known != nil { // the store looked them up already
				if known[p.EnvironmentID] == nil {
					known[p.EnvironmentID] = map[string]store.Subscriber{}
				}
				maps.Copy(known[p.EnvironmentID], p.Known)
				continue
			}
			for _, rcp := range p.Recipients {
				if rcp.Upsert == nil {
					ids[p.EnvironmentID] = append(ids[p.EnvironmentID], rcp.SubscriberID)
				}
			}
		}
		for env, list := range ids {
			subs, err := r.SubscriberGetMany(ctx, scopes[env], list)
			if err != nil {
				return // the workers run the steps
			}
			if known[env] == nil {
				known[env] = subs
				continue
			}
			maps.Copy(known[env], subs)
		}
		internal := map[wfKey][]string{}
		for _, p := range ps {
			if !startsInApp(p) {
				continue
			}
			k := wfKey{p.EnvironmentID, p.Workflow.ID}
			for _, rcp := range p.Recipients {
				if s, ok := known[p.EnvironmentID][rcp.SubscriberID]; ok && rcp.Upsert == nil {
					internal[k] = append(internal[k], s.ID)
				}
			}
		}
		prefs := map[wfKey]map[string]store.ChannelChoices{}
		read := map[wfKey]bool{} // the store read them with the recipients
		for _, p := range ps {
			k := wfKey{p.EnvironmentID, p.Workflow.ID}
			if !startsInApp(p) || p.KnownChoices == nil {
				read[k] = false
				continue
			}
			if _, seen := read[k]; !seen {
				read[k] = true
			}
			if read[k] {
				if prefs[k] == nil {
					prefs[k] = map[string]store.ChannelChoices{}
				}
				maps.Copy(prefs[k], p.KnownChoices)
			}
		}
		for k, list := range internal {
			if read[k] {
				continue
			}
			choices, err := r.ChannelChoices(ctx, &store.ChannelChoicesParams{Scope: scopes[k.env], SubscriberIDs: list,
				WorkflowID: k.workflow})
			if err != nil {
				return
			}
			prefs[k] = choices
		}
		values, groupTr := memoValues(r.EnvironmentVariableValues), memoTranslations(tr)
		for _, p := range ps {
			if startsInApp(p) {
				planTrigger(ctx, sb, groupTr, envs, p, known[p.EnvironmentID], prefs[wfKey{p.EnvironmentID, p.Workflow.ID}], values)
			}
		}
	}
}

func startsInApp(p *store.TriggerParams) bool {
	// A synced workflow's steps run in its bridge, never with the trigger.
	return p.Workflow.Origin != store.OriginBridge && len(p.Workflow.Steps) > 0 && p.Workflow.Steps[0].Type == "in_app" && len(p.Recipients) > 0
}

// planTrigger fills p.InApp for the recipients found in known.
func planTrigger(ctx context.Context, sb *sandbox.Sandbox, tr TranslationReader, envs EnvironmentReader, p *store.TriggerParams,
	known map[string]store.Subscriber, prefs map[string]store.ChannelChoices, values EnvironmentValues) {
	// A one-off engine: the in-app step needs the sandbox and the clock,
	// and the first attempt is within any bound.
	e := &Engine{sb: sb, now: func() time.Time { return p.Now }, log: nopLogger, o: Options{MaxAttempts: 1}, tr: tr, envValues: values,
		envs: envs}
	step := p.Workflow.Steps[0]
	if tr == nil && sandbox.HasTranslations(step.ControlValues) {
		return // the workers read the translations
	}
	if namesEnv(step.ControlValues) {
		// Read (and memoized) here: a failed read leaves the step to a
		// worker, which retries, where the one-off engine would fail it.
		if _, err := values(ctx, p.EnvironmentID); err != nil {
			return
		}
	}
	inApp := make([]*store.JobOutcome, len(p.Recipients))
	planned := false
	for i, rcp := range p.Recipients {
		sub, ok := known[rcp.SubscriberID]
		if !ok || rcp.Upsert != nil {
			continue
		}
		n := store.Notification{ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID,
			WorkflowID: p.Workflow.ID, SubscriberID: sub.ID, TransactionID: p.TransactionID, Payload: p.Payload,
			Overrides: p.Overrides, Actor: p.Actor, Tags: p.Tags, Contexts: p.Contexts, ContextKeys: p.ContextKeys,
			CreatedAt: p.Now, UpdatedAt: p.Now}
		j := store.Job{ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID,
			NotificationID: n.ID, SubscriberID: sub.ID, WorkflowID: p.Workflow.ID, TransactionID: p.TransactionID,
			StepID: step.ID, StepIndex: 0, Type: step.Type, ProviderID: p.ProviderFor(step.Type), Status: store.JobRunning,
			RunAt: p.Now, Attempts: 1, CreatedAt: p.Now, UpdatedAt: p.Now}
		c := store.Claimed{Job: j, Notification: n, Subscriber: sub, Workflow: p.Workflow, Preferences: prefs[sub.ID]}
		// The job's history starts as a worker's does, "Step queued" first.
		queued := store.ExecutionDetail{ID: id.NewAt(p.Now), JobID: j.ID, NotificationID: n.ID, EnvironmentID: j.EnvironmentID,
			Status: "Pending", Source: "Internal", Detail: "Step queued", ProviderID: j.ProviderID, CreatedAt: p.Now}
		if o := planInApp(ctx, e, c); o != nil {
			o.Details = append([]store.ExecutionDetail{queued}, o.Details...)
			inApp[i], planned = o, true
		}
	}
	if planned {
		p.InApp = inApp
	}
}

// nopLogger discards: planning logs nothing (a step that fails is recorded
// on its job).
var nopLogger = slog.New(slog.DiscardHandler)

// planInApp runs one recipient's in-app step, or returns nil (a panic
// included) to leave it to a worker.
func planInApp(ctx context.Context, e *Engine, c store.Claimed) (o *store.JobOutcome) {
	defer func() {
		if recover() != nil {
			o = nil
		}
	}()
	out, _ := e.run(ctx, c, nil)
	if out.Status == store.JobFailed && out.Error == translationsUnread {
		return nil // a worker reads them again
	}
	return &out
}
