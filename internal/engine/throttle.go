package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// The throttle step (Novu's add-job handleThrottle): the first threshold
// executions in a window pass; past it the step and every later step of the
// notification are skipped. A window belongs to (environment, subscriber,
// workflow, step, throttle key group) and opens at the first execution it
// counts.

// ThrottleCounter counts throttle executions (store.Steps).
type ThrottleCounter interface {
	ThrottleCount(ctx context.Context, p *store.ThrottleCountParams) (store.ThrottleCount, error)
}

// throttleExceeded is the detail of a throttled execution.
const throttleExceeded = "Throttle limit exceeded"

// throttle counts the execution in its window and lets it pass or not.
func (e *Engine) throttle(ctx context.Context, o store.JobOutcome, c store.Claimed, step *store.Step, ctl map[string]any) store.JobOutcome {
	now := e.now()
	threshold := 1.0
	if t, ok := number(ctl["threshold"]); ok {
		threshold = t
	}
	if threshold < 1 {
		return e.failCancel(o, "Internal", "The throttle step is misconfigured: threshold must be at least 1")
	}
	var end time.Time
	switch typ := str(ctl["type"]); typ {
	case "", "fixed":
		amount, ok := number(ctl["amount"])
		if !ok || amount < 1 {
			return e.failCancel(o, "Internal", "The throttle step has no amount")
		}
		t, err := addUnit(now, amount, str(ctl["unit"]))
		if err != nil || !throttleUnits[str(ctl["unit"])] {
			return e.failCancel(o, "Internal", fmt.Sprintf("The throttle step is misconfigured: unit %q is not minutes, hours or days", str(ctl["unit"])))
		}
		end = t
	case "dynamic":
		t, usable, failure := dynamicWindowEnd(c.Notification.Payload, str(ctl["dynamicKey"]), now)
		if failure != "" {
			return e.failCancel(o, "Payload", failure)
		}
		if !usable { // no usable value: not throttled
			return e.throttled(o, false, 0, threshold, now, time.Time{})
		}
		end = t
	default:
		return e.failCancel(o, "Internal", fmt.Sprintf("Throttle type %q is not fixed or dynamic", typ))
	}
	counter, ok := e.o.Store.(ThrottleCounter)
	if !ok {
		return e.fail(o, "Internal", "This store cannot count throttle executions")
	}
	n, err := counter.ThrottleCount(ctx, &store.ThrottleCountParams{
		Scope:        store.Scope{OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID},
		SubscriberID: c.Job.SubscriberID, WorkflowID: c.Job.WorkflowID, StepID: step.ID,
		Key: throttleGroup(step.ControlValues["throttleKey"], ctl["throttleKey"], c.Notification.Payload), WindowEnd: end, Now: now,
	})
	if err != nil {
		return e.retry(o, err)
	}
	return e.throttled(o, float64(n.Count) > threshold, n.Count, threshold, n.WindowStart, n.WindowEnd)
}

var throttleUnits = map[string]bool{"minutes": true, "hours": true, "days": true}

// throttled finishes a throttle job: it passed (completed) or it did not
// (skipped, with the rest of the notification).
func (e *Engine) throttled(o store.JobOutcome, over bool, count int, threshold float64, start, end time.Time) store.JobOutcome {
	out := map[string]any{"throttled": over, "executionCount": count, "threshold": threshold}
	if !start.IsZero() {
		out["windowStart"] = wire.Time(start)
	}
	o.Output, _ = json.Marshal(out)
	if !over {
		o.Status = store.JobCompleted
		o.Details = append(o.Details, e.detail(o, "Success", "Internal", "Throttle passed", nil))
		return o
	}
	raw, _ := json.Marshal(map[string]any{"executionCount": count, "threshold": threshold, "throttledUntil": wire.Time(end)})
	rs := string(raw)
	o.Status, o.ContinueWorkflow, o.SkipRest = store.JobSkipped, false, true
	o.Details = append(o.Details, e.detail(o, "Success", "Internal", throttleExceeded, &rs))
	return o
}

// failCancel fails the job and cancels the rest of its notification: the
// workflow stops.
func (e *Engine) failCancel(o store.JobOutcome, source, text string) store.JobOutcome {
	o = e.fail(o, source, text)
	o.ContinueWorkflow, o.CancelRest = false, true
	return o
}

// dynamicWindowEnd reads a dynamic throttle's window end from the payload
// value at key: an ISO 8601 time, or {amount, unit} from now. usable false:
// no usable value. A time in the past is a failure.
func dynamicWindowEnd(payload store.JSON, key string, now time.Time) (end time.Time, usable bool, failure string) {
	key = strings.TrimPrefix(key, "payload.")
	if key == "" {
		return end, false, ""
	}
	v, ok := payloadAt(payload, key)
	if !ok {
		return end, false, ""
	}
	switch x := v.(type) {
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return end, false, ""
		}
		if !t.After(now) {
			return end, false, "Throttle window in past"
		}
		return t, true, ""
	case map[string]any:
		amount, ok := number(x["amount"])
		if !ok || amount <= 0 {
			return end, false, ""
		}
		t, err := addUnit(now, amount, str(x["unit"]))
		if err != nil {
			return end, false, ""
		}
		return t, true, ""
	}
	return end, false, ""
}

// throttleGroup is the key group of an execution: none (""), a rendered
// template's value when the stored key holds "{{", else the value of the
// payload path it names (missing: none).
func throttleGroup(stored, rendered any, payload store.JSON) string {
	raw, _ := stored.(string)
	if raw == "" {
		return ""
	}
	if strings.Contains(raw, "{{") {
		return boundKey(strings.TrimSpace(str(rendered)))
	}
	if v, ok := payloadAt(payload, strings.TrimPrefix(raw, "payload.")); ok && v != nil {
		return groupKey(v)
	}
	return ""
}
