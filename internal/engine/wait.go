package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// maxDigestKey is the longest digest key kept as is; a longer one is kept as
// its SHA-256, which groups events alike.
const maxDigestKey = 256

// payloadAt reads a dotted path of a payload.
func payloadAt(payload store.JSON, path string) (any, bool) {
	var v any
	if len(payload) == 0 || json.Unmarshal(payload, &v) != nil {
		return nil, false
	}
	for _, part := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case string:
		var f float64
		_, err := fmt.Sscan(t, &f)
		return f, err == nil
	}
	return 0, false
}

// delay parks the job until its time; the following steps run when it is due.
func (e *Engine) delay(o store.JobOutcome, c store.Claimed, ctl map[string]any) store.JobOutcome {
	now := e.now()
	var due time.Time
	switch typ := str(ctl["type"]); typ {
	case "", "regular":
		amount, ok := number(ctl["amount"])
		if !ok {
			return e.failStop(o, "Internal", "The delay step has no amount")
		}
		t, err := addUnit(now, amount, str(ctl["unit"]))
		if err != nil {
			return e.failStop(o, "Internal", "The delay step is misconfigured: "+err.Error())
		}
		due = t
	case "scheduled":
		path := str(ctl["delayPath"])
		v, ok := payloadAt(c.Notification.Payload, path)
		s, isStr := v.(string)
		if !ok || !isStr {
			return e.failStop(o, "Payload", fmt.Sprintf("The payload has no timestamp at %q", path))
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return e.failStop(o, "Payload", fmt.Sprintf("The payload value at %q is not an ISO 8601 timestamp", path))
		}
		if !t.After(now) {
			return e.failStop(o, "Payload", fmt.Sprintf("The payload time at %q is in the past", path))
		}
		due = t
	case "timed":
		cron := strings.TrimSpace(str(ctl["cron"]))
		if cron == "" { // cron-parser reads "" as every minute: never what a timed delay means
			return e.failStop(o, "Internal", "The timed delay has no cron expression")
		}
		t, err := nextCron(cron, now, subscriberLocation(c.Subscriber))
		if err != nil {
			return e.failStop(o, "Internal", "The timed delay is misconfigured: "+err.Error())
		}
		due = t
	default:
		return e.failStop(o, "Internal", fmt.Sprintf("Delay type %q is not regular, scheduled or timed", typ))
	}
	o.Status, o.RunAt, o.ContinueWorkflow = store.JobDelayed, due, false
	o.Output, _ = json.Marshal(map[string]any{"duration": due.Sub(now).Milliseconds()})
	o.Details = append(o.Details, e.detail(o, "Success", "Internal", "Delayed until "+due.UTC().Format(time.RFC3339Nano), nil))
	return o
}

// failStop fails the job and skips the rest of its notification.
func (e *Engine) failStop(o store.JobOutcome, source, text string) store.JobOutcome {
	o = e.fail(o, source, text)
	o.ContinueWorkflow, o.SkipRest = false, true
	return o
}

// digest prepares the placing of the job into its digest window; RunOnce
// places a batch's events together (see store.DigestJoinMany). A
// misconfigured step fails at once, with no join.
func (e *Engine) digest(o store.JobOutcome, c store.Claimed, ctl map[string]any) (store.JobOutcome, *store.DigestJoinParams) {
	now := e.now()
	// A window counts from when the event reached this step (its job became
	// due), not from when a worker got to it.
	since := now
	if c.Job.RunAt.Before(now) {
		since = c.Job.RunAt
	}
	p, failure := planDigest(ctl, since, now, c.Subscriber, c.Notification.Payload)
	if failure != "" {
		return e.failStop(o, "Internal", failure), nil
	}
	p.Job = c.Job
	return o, p
}

// SubscriberReader reads the recipients of a trigger.
type SubscriberReader interface {
	SubscriberGetMany(ctx context.Context, scope store.Scope, subscriberIDs []string) (map[string]store.Subscriber, error)
}

// PlanDigests plans, before the trigger's transaction, the first step of a
// workflow that starts with a digest: for each recipient the step's controls
// are rendered in the sandbox — with the subscriber as it will be once the
// trigger's upsert is written — and read into the placing of its event,
// which store.Trigger then writes in its own transaction. So a burst of
// events never waits in the queue to be merged, and no template runs inside
// a write transaction. Other workflows are left as they are. A recipient
// whose controls fail to render or are misconfigured gets no plan: a worker
// runs that step and records why.
func PlanDigests(ctx context.Context, sb *sandbox.Sandbox, subs SubscriberReader, p *store.TriggerParams) error {
	if p.Workflow.Origin == store.OriginBridge {
		return nil // its bridge runs the step: a worker calls it
	}
	if len(p.Workflow.Steps) == 0 || p.Workflow.Steps[0].Type != "digest" || namesEnv(p.Workflow.Steps[0].ControlValues) {
		return nil // a step naming env is a worker's: it reads the environment's values
	}
	ids := make([]string, len(p.Recipients))
	for i, r := range p.Recipients {
		ids[i] = r.SubscriberID
	}
	known, err := subs.SubscriberGetMany(ctx, p.Scope, ids)
	if err != nil {
		return err
	}
	step := p.Workflow.Steps[0]
	p.DigestPlans = make([]*store.DigestJoinParams, len(p.Recipients))
	for i, r := range p.Recipients {
		sub, ok := known[r.SubscriberID]
		if !ok {
			sub = store.Subscriber{SubscriberID: r.SubscriberID}
		}
		if r.Upsert != nil {
			sub = r.Upsert.Apply(sub)
		}
		p.DigestPlans[i] = planTriggerDigest(sb, step, sub, p.Payload, p.Contexts, p.Now)
	}
	return nil
}

// planTriggerDigest plans one recipient's digest step, or returns nil (a
// panic included) to leave it to a worker.
func planTriggerDigest(sb *sandbox.Sandbox, step store.Step, sub store.Subscriber, payload, contexts store.JSON,
	now time.Time) (plan *store.DigestJoinParams) {
	defer func() {
		if recover() != nil {
			plan = nil
		}
	}()
	if sandbox.HasTranslations(step.ControlValues) {
		return nil // a worker reads the translations
	}
	if rule, err := StepCondition(step); err != nil || rule != nil {
		return nil // a worker evaluates the step's conditions
	}
	vars := bindings(sub, payload, nil)
	bindContexts(vars, contexts)
	ctl, err := sb.Controls(StepValues(step), vars)
	if err != nil {
		return nil
	}
	plan, failure := planDigest(ctl, now, now, sub, payload)
	if failure != "" {
		return nil
	}
	return plan
}

// planDigest reads a digest step's rendered controls into the placing of one
// event that reached the step at since: its window's end, backoff, key and
// metadata (Job is the caller's to set). A non-empty failure says why the
// step is misconfigured.
func planDigest(ctl map[string]any, since, now time.Time, sub store.Subscriber, payload store.JSON) (*store.DigestJoinParams, string) {
	ctl = v2Digest(ctl)
	typ := str(ctl["type"])
	if typ == "" {
		typ = "regular"
	}
	meta := map[string]any{"type": typ}
	for _, k := range []string{"amount", "unit", "digestKey", "backoff", "backoffAmount", "backoffUnit", "updateMode"} {
		if v, ok := ctl[k]; ok && v != nil && v != "" {
			meta[k] = v
		}
	}
	amount, hasAmount := number(ctl["amount"])
	unit := str(ctl["unit"])
	if hasAmount {
		meta["amount"] = amount
	}
	if ba, ok := number(ctl["backoffAmount"]); ok {
		meta["backoffAmount"] = ba
	}
	if b, ok := ctl["backoff"].(bool); ok {
		meta["backoff"] = b
	} else {
		delete(meta, "backoff")
	}
	var end time.Time
	switch typ {
	case "regular", "backoff":
		if !hasAmount {
			return nil, "The digest step has no amount"
		}
		t, err := addUnit(since, amount, unit)
		if err != nil {
			return nil, "The digest step is misconfigured: " + err.Error()
		}
		end = t
	case "timed":
		var tc timedConfig
		if raw, err := json.Marshal(ctl["timed"]); err == nil {
			_ = json.Unmarshal(raw, &tc)
		}
		t, err := nextTimed(since, subscriberLocation(sub), unit, amount, tc)
		if err != nil {
			return nil, "The timed digest is misconfigured: " + err.Error()
		}
		end = t
		if timed, ok := ctl["timed"].(map[string]any); ok {
			meta["timed"] = timedMetadata(timed)
		}
	default:
		return nil, fmt.Sprintf("Digest type %q is not regular, backoff or timed", typ)
	}
	var backoff time.Duration
	if typ == "backoff" || ctl["backoff"] == true {
		ba, ok := number(ctl["backoffAmount"])
		bu := str(ctl["backoffUnit"])
		if !ok {
			ba, bu = amount, unit
		}
		t, err := addUnit(now, ba, bu)
		if err != nil || !t.After(now) {
			return nil, "The digest backoff is misconfigured"
		}
		backoff = t.Sub(now)
	}
	key := ""
	if path := str(ctl["digestKey"]); path != "" {
		if v, ok := payloadAt(payload, path); ok {
			key = groupKey(v)
		}
	}
	return &store.DigestJoinParams{
		Key: key, WindowEnd: end, Backoff: backoff, Event: payload, Metadata: meta, At: since, Now: now,
	}, ""
}

// v2Digest reads Novu's v2 digest controls as the v1 ones they stand for:
// lookBackWindow {amount, unit} is backoff with backoffAmount/backoffUnit;
// cron is a timed digest with that cronExpression.
func v2Digest(ctl map[string]any) map[string]any {
	cron, hasCron := ctl["cron"].(string)
	lb, hasLB := ctl["lookBackWindow"].(map[string]any)
	if (!hasCron || cron == "") && !hasLB {
		return ctl
	}
	out := maps.Clone(ctl)
	delete(out, "lookBackWindow")
	delete(out, "cron")
	if hasCron && cron != "" {
		out["type"] = "timed"
		timed, _ := out["timed"].(map[string]any)
		timed = maps.Clone(timed)
		if timed == nil {
			timed = map[string]any{}
		}
		timed["cronExpression"] = cron
		out["timed"] = timed
	} else if str(out["type"]) == "timed" {
		out["type"] = "regular"
	}
	if hasLB {
		out["backoff"] = true
		out["backoffAmount"], out["backoffUnit"] = lb["amount"], lb["unit"]
	}
	return out
}

// subscriberLocation is the subscriber's timezone, UTC without a usable one.
func subscriberLocation(sub store.Subscriber) *time.Location {
	if tz := sub.Timezone; tz != nil && *tz != "" {
		if l, err := time.LoadLocation(*tz); err == nil {
			return l
		}
	}
	return time.UTC
}

// groupKey is the key a payload value groups by (a digest's digestKey, a
// throttle's throttleKey): a string as it is, another value as its JSON.
func groupKey(v any) string {
	key, isStr := v.(string)
	if !isStr {
		b, _ := json.Marshal(v)
		key = string(b)
	}
	return boundKey(key)
}

// boundKey keeps a key longer than maxDigestKey as its SHA-256: a key only
// groups, and PostgreSQL cannot index a long one.
func boundKey(key string) string {
	if len(key) <= maxDigestKey {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// joinDigests places the batch's digest events in one transaction and
// marks their outcomes written; on failure they are retried with backoff.
func (e *Engine) joinDigests(ctx context.Context, outcomes []store.JobOutcome, joins []*store.DigestJoinParams, at []int) {
	if len(joins) == 0 {
		return
	}
	res, err := e.o.Store.DigestJoinMany(ctx, joins)
	now := e.now()
	for k, i := range at {
		if err != nil {
			outcomes[i] = e.retry(outcomes[i], err)
			continue
		}
		outcomes[i].Handled = true
		j := joins[k].Job
		j.Status = res[k].Status // "" for a job whose lease was lost: nothing to observe
		e.done(j, now)
		if res[k].Outcome == store.DigestImmediate {
			e.Wake()
		}
	}
	if err != nil {
		e.log.Error("placing digest events", "count", len(joins), "err", err)
	}
}

// timedMetadata keeps the timed fields of a digest's metadata (OpenAPI
// DigestTimedMetadata), with
// monthDays as numbers.
func timedMetadata(in map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"atTime", "weekDays", "ordinal", "ordinalValue", "monthlyType", "cronExpression", "untilDate"} {
		if v, ok := in[k]; ok && v != nil && v != "" {
			out[k] = v
		}
	}
	if days, ok := in["monthDays"].([]any); ok {
		nums := make([]float64, 0, len(days))
		for _, d := range days {
			if n, ok := number(d); ok {
				nums = append(nums, n)
			}
		}
		out["monthDays"] = nums
	}
	return out
}

// digestStep is the step.* binding of the steps after a digest.
func digestStep(d store.JSON) map[string]any {
	if len(d) == 0 {
		return nil
	}
	var m struct {
		Events []any `json:"events"`
	}
	if json.Unmarshal(d, &m) != nil {
		return nil
	}
	if m.Events == nil {
		m.Events = []any{}
	}
	return map[string]any{"digest": true, "events": m.Events, "total_count": len(m.Events)}
}
