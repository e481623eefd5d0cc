package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// isDelivery reports whether a step type delivers through providers.
func isDelivery(stepType string) bool {
	switch stepType {
	case "email", "sms", "chat", "push":
		return true
	}
	return false
}

// maxAttempts bounds a job's runs: a delivery job may use its attempts on
// every integration it fails over to, beyond the runs a crash can cost.
func (e *Engine) maxAttempts(j store.Job, stepType string) int {
	if !isDelivery(stepType) {
		return e.o.MaxAttempts
	}
	return e.o.MaxAttempts + e.o.Delivery.Attempts*(len(readState(j.Delivery).Tried)+1)
}

// deliver runs an e-mail, SMS, chat or push step.
func (e *Engine) deliver(ctx context.Context, o store.JobOutcome, c store.Claimed, step *store.Step,
	ctl map[string]any, b *batchIntegrations) store.JobOutcome {
	ins, err := b.get(ctx, e.o.Store, c.Job)
	if err != nil {
		return e.retry(o, err)
	}
	ov := readOverrides(c.Notification.Overrides)
	pinned := ov.pinned(step.Type)
	cands := candidates(ins, step.Type, pinned, bindings(c.Subscriber, c.Notification.Payload, nil))
	if pinned != "" && len(cands) == 0 {
		return e.fail(o, "Payload", fmt.Sprintf("No active %s integration has the identifier %q", step.Type, pinned))
	}
	// Integrations of providers Herald does not deliver through yet are
	// passed over for those it does; alone, they fail the step.
	var unsupported []string
	cands = slices.DeleteFunc(cands, func(in store.Integration) bool {
		_, ok := e.o.Delivery.Registry.Get(in.ProviderID)
		if !ok {
			unsupported = append(unsupported, in.ProviderID)
		}
		return !ok
	})
	if len(cands) == 0 && len(unsupported) > 0 {
		return e.fail(o, "Internal", fmt.Sprintf("Herald does not deliver through %s yet: nothing was sent", strings.Join(unsupported, ", ")))
	}
	st := readState(c.Job.Delivery)
	switch step.Type {
	case "email":
		return e.deliverOne(ctx, o, c, step, emailMessage(c, ctl, ov), cands, pinned != "", st, ov)
	case "sms":
		return e.deliverOne(ctx, o, c, step, smsMessage(c, ctl, ov), cands, pinned != "", st, ov)
	case "chat":
		return e.deliverMany(ctx, o, c, step, ctl, chatTargets(c.Subscriber, cands), st, ov)
	default:
		return e.deliverMany(ctx, o, c, step, ctl, pushTargets(c.Subscriber, cands), st, ov)
	}
}

// deliveryState is a delivery job's progress across its runs, kept on the job.
type deliveryState struct {
	// IntegrationID is the integration an e-mail or SMS is being sent through.
	IntegrationID string `json:"integrationId,omitempty"`
	// Attempts counts the transient failures on it (chat and push: of the job).
	Attempts int `json:"attempts,omitempty"`
	// Tried are the integrations failed over from.
	Tried []string `json:"tried,omitempty"`
	// Done are the targets (chat, push) delivered or failed for good.
	Done []string `json:"done,omitempty"`
}

func readState(raw store.JSON) deliveryState {
	var st deliveryState
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &st)
	}
	return st
}

func (st deliveryState) json() store.JSON {
	b, _ := json.Marshal(st)
	return b
}

// batchIntegrations loads each environment's active integrations once per batch.
type batchIntegrations struct {
	mu    sync.Mutex
	byEnv map[string][]store.Integration
	// bridges are the environments' bridges of synced workflows' jobs.
	bridges map[string]bridgeTarget
	// keys are the environments' signing keys (HTTP request steps, bridges).
	keys map[string]string
}

func (b *batchIntegrations) get(ctx context.Context, s store.Store, j store.Job) ([]store.Integration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ins, ok := b.byEnv[j.EnvironmentID]; ok {
		return ins, nil
	}
	ins, err := s.IntegrationList(ctx, &store.IntegrationListParams{OrganizationID: j.OrganizationID,
		EnvironmentID: j.EnvironmentID, ActiveOnly: true})
	if err != nil {
		return nil, err
	}
	if b.byEnv == nil {
		b.byEnv = map[string][]store.Integration{}
	}
	b.byEnv[j.EnvironmentID] = ins
	return ins, nil
}

// candidates are the active integrations of a channel that may deliver this
// job, in failover order: the primary first, then by creation. A pinned
// identifier (overrides.<channel>.integrationIdentifier) allows that one only.
func candidates(ins []store.Integration, channel, pinned string, vars map[string]any) []store.Integration {
	var out []store.Integration
	for _, in := range ins {
		if in.Channel != channel || !in.Active || in.Deleted {
			continue
		}
		if pinned != "" && in.Identifier != pinned {
			continue
		}
		if !conditionsMatch(in.Conditions, vars) {
			continue
		}
		out = append(out, in)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Primary && !out[j].Primary })
	return out
}

// attempt is one call to a provider.
type attempt struct {
	in     store.Integration
	msg    *provider.Message
	target string
	res    *provider.Result
	err    *provider.Error
}

// heldReason is the error of a call not made because the integration's
// provider asked to wait (a 429's Retry-After).
const heldReason = "the provider asked to wait (Retry-After); not called"

// send makes one provider call within the job's deadline and the
// integration's bound of calls in flight.
func (e *Engine) send(ctx context.Context, a *attempt) {
	se, err := e.senders.get(a.in)
	if err != nil {
		a.err = provider.AsError(err)
		return
	}
	if wait := se.held(e.now()); wait > 0 {
		a.err = &provider.Error{Class: provider.Transient, Reason: heldReason, RetryAfter: wait}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, e.o.Delivery.Timeout)
	defer cancel()
	release, err := e.senders.slot(ctx, se)
	if err != nil {
		a.err = &provider.Error{Class: provider.Transient, Reason: "no free connection to the provider in time", Err: err}
		return
	}
	defer release()
	if wait := se.held(e.now()); wait > 0 { // a 429 came while this call waited for its slot
		a.err = &provider.Error{Class: provider.Transient, Reason: heldReason, RetryAfter: wait}
		return
	}
	res, err := se.s.Send(provider.WithPassthrough(ctx, a.msg.Passthrough), a.msg)
	if err != nil {
		a.err = provider.AsError(err)
		if a.err.RetryAfter > 0 {
			// A rate limit: the integration's other deliveries wait too,
			// rather than each earning its own 429.
			se.hold(e.now().Add(a.err.RetryAfter))
		}
		return
	}
	a.res = res
}

// deliveryID is the message id of one delivery, the same in every run of
// the job, so that a re-run sends the very request of the first (providers
// compare a repeated idempotency key's body): the job id's time part and a
// hash of the job, integration and target.
func deliveryID(jobID, integrationID, target string) string {
	h := sha256.Sum256([]byte("message\x00" + jobID + "\x00" + integrationID + "\x00" + target))
	prefix := jobID
	if len(prefix) >= 8 {
		prefix = prefix[:8]
	}
	return prefix + hex.EncodeToString(h[:])[:24-len(prefix)]
}

// idempotencyKey is stable across the runs of one delivery: a re-run after
// a crash carries the key of the first run.
func idempotencyKey(jobID, integrationID, target string) string {
	h := sha256.Sum256([]byte(jobID + "\x00" + integrationID + "\x00" + target))
	return "herald-" + jobID + "-" + hex.EncodeToString(h[:6])
}

// providerDetail is an execution detail about a provider call.
func (e *Engine) providerDetail(o store.JobOutcome, in store.Integration, status, text string, raw any) store.ExecutionDetail {
	var rs *string
	if raw != nil {
		var s string
		if str, ok := raw.(string); ok {
			s = str
		} else {
			b, _ := json.Marshal(raw)
			s = string(b)
		}
		rs = &s
	}
	d := e.detail(o, status, "Credentials", text, rs)
	if in.ProviderID != "" {
		d.ProviderID = in.ProviderID
	}
	return d
}

func integrationRaw(in store.Integration) map[string]any {
	return map[string]any{"_integrationId": in.ID, "providerId": in.ProviderID, "identifier": in.Identifier,
		"name": in.Name, "channel": in.Channel}
}

func errorRaw(pe *provider.Error) map[string]any {
	m := map[string]any{"class": pe.Class.String(), "reason": pe.Reason}
	if pe.Status != 0 {
		m["status"] = pe.Status
	}
	if pe.Raw != "" {
		m["answer"] = pe.Raw
	}
	if pe.RetryAfter > 0 {
		m["retryAfterSeconds"] = pe.RetryAfter.Seconds()
	}
	return m
}

// message is the record of one delivery.
func (e *Engine) message(c store.Claimed, channel string, a *attempt, content string, subject *string, where any) *store.Message {
	now := e.now()
	m := &store.Message{
		ID: a.msg.ID, OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID,
		NotificationID: c.Job.NotificationID, JobID: c.Job.ID, SubscriberID: c.Job.SubscriberID,
		WorkflowID: c.Job.WorkflowID, TemplateIdentifier: c.Workflow.Key, TransactionID: c.Job.TransactionID,
		Channel: channel, ProviderID: a.in.ProviderID, Content: content, Subject: subject, CTA: store.JSON("{}"),
		Actor: c.Notification.Actor, Payload: c.Notification.Payload, Overrides: c.Notification.Overrides,
		Tags: c.Workflow.Tags, Status: store.MessageSent, CreatedAt: now, UpdatedAt: now, Target: a.target,
		IntegrationID: a.in.ID,
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
	m.Delivery, _ = json.Marshal(where)
	if a.res != nil {
		m.ProviderMessageID = a.res.ProviderMessageID
	}
	outcome := metrics.OutcomeSent
	if a.err != nil {
		m.Status, m.ErrorText = store.MessageError, a.err.Error()
		outcome = metrics.OutcomeFailed
	}
	e.o.Metrics.MessageOutcome(channel, a.in.ProviderID, outcome)
	return m
}

// requeue schedules the job's next run: after a backoff (at least what the
// provider asked for) or at once (failover).
func (e *Engine) requeue(o store.JobOutcome, st deliveryState, wait time.Duration, cause string) store.JobOutcome {
	o.Status, o.RunAt, o.Error, o.ContinueWorkflow, o.SkipRest = store.JobQueued, e.now().Add(wait), cause, false, false
	o.Delivery = st.json()
	return o
}

// retryWait is the backoff before retry n, at least what the provider asked.
func retryWait(n int, pe *provider.Error) time.Duration {
	return min(max(backoff(n), pe.RetryAfter), time.Hour)
}

// deliverOne sends an e-mail or SMS through one integration at a time:
// transient failures are retried on it with backoff, then — unless the
// trigger pinned the integration — the next candidate is tried.
func (e *Engine) deliverOne(ctx context.Context, o store.JobOutcome, c store.Claimed, step *store.Step,
	msg *provider.Message, cands []store.Integration, pinned bool, st deliveryState, ov overrides) store.JobOutcome {
	channel := step.Type
	if len(cands) == 0 {
		return e.fail(o, "Internal", "Subscriber does not have an active integration")
	}
	if len(msg.To) == 0 {
		return e.fail(o, "Payload", "Subscriber missing recipient details")
	}
	var cur *store.Integration
	for i := range cands {
		if cands[i].ID == st.IntegrationID {
			cur = &cands[i]
		}
	}
	if cur == nil {
		for i := range cands {
			if !slices.Contains(st.Tried, cands[i].ID) {
				cur = &cands[i]
				break
			}
		}
	}
	if cur == nil {
		return e.fail(o, "Internal", "Every active integration of the channel failed")
	}
	st.IntegrationID = cur.ID
	o.IntegrationID, o.Delivery = cur.ID, st.json()
	msg.ID = deliveryID(c.Job.ID, cur.ID, "")
	msg.IdempotencyKey = idempotencyKey(c.Job.ID, cur.ID, "")
	msg.Overrides, msg.Passthrough = provider.SplitPassthrough(ov.provider(step.StepID, cur.ProviderID))
	o.Details = append(o.Details, e.providerDetail(o, *cur, "Pending", "Start sending message", nil),
		e.providerDetail(o, *cur, "Pending", "Integration instance selected", integrationRaw(*cur)))
	a := &attempt{in: *cur, msg: msg}
	e.send(ctx, a)
	if a.err != nil && a.err.Reason == heldReason {
		// Not an attempt: the job waits out the provider's Retry-After.
		o.Details = append(o.Details[:len(o.Details)-2], e.providerDetail(o, *cur, "Warning", fmt.Sprintf(
			"Waiting %s: the provider asked to wait (Retry-After)", a.err.RetryAfter.Round(time.Millisecond)), errorRaw(a.err)))
		return e.requeue(o, st, a.err.RetryAfter, a.err.Error())
	}
	where := map[string]any{"to": msg.To}
	content, subject := msg.HTML, &msg.Subject
	if channel == "sms" {
		where, content, subject = map[string]any{"phone": msg.To[0]}, msg.Content, nil
	}
	if a.err == nil {
		m := e.message(c, channel, a, content, subject, where)
		o.Messages, o.Status = []*store.Message{m}, store.JobCompleted
		o.Details = append(o.Details, e.providerDetail(o, *cur, "Pending", "Message created", map[string]string{"messageId": m.ID}),
			e.providerDetail(o, *cur, "Success", "Message sent", providerAnswer(a.res)))
		return o
	}
	pe := a.err
	if pe.Class == provider.Transient {
		st.Attempts++
		if st.Attempts < e.o.Delivery.Attempts {
			wait := retryWait(st.Attempts, pe)
			o.Details = append(o.Details, e.providerDetail(o, *cur, "Warning", fmt.Sprintf(
				"Temporary provider error, retrying in %s (attempt %d of %d): %s", wait.Round(time.Millisecond),
				st.Attempts, e.o.Delivery.Attempts, pe.Error()), errorRaw(pe)))
			e.o.Metrics.MessageOutcome(channel, cur.ProviderID, metrics.OutcomeRetry)
			return e.requeue(o, st, wait, pe.Error())
		}
		if next := nextCandidate(cands, st, cur.ID); !pinned && next != nil {
			o.Details = append(o.Details, e.providerDetail(o, *cur, "Warning", fmt.Sprintf(
				"Failing over to integration %s (%s) after %d failed attempts on %s (%s): %s", next.Identifier,
				next.ProviderID, st.Attempts, cur.Identifier, cur.ProviderID, pe.Error()), errorRaw(pe)))
			st.Tried, st.IntegrationID, st.Attempts = append(st.Tried, cur.ID), next.ID, 0
			o.IntegrationID = next.ID
			e.o.Metrics.MessageOutcome(channel, cur.ProviderID, metrics.OutcomeRetry)
			return e.requeue(o, st, 0, pe.Error())
		}
	}
	m := e.message(c, channel, a, content, subject, where)
	o.Messages = []*store.Message{m}
	o.Details = append(o.Details, e.providerDetail(o, *cur, "Failed", "Unexpected provider error", errorRaw(pe)))
	o.Status, o.Error, o.Delivery = store.JobFailed, "Unexpected provider error: "+pe.Error(), st.json()
	return o
}

// nextCandidate is the first integration after cur not yet tried.
func nextCandidate(cands []store.Integration, st deliveryState, cur string) *store.Integration {
	for i := range cands {
		if cands[i].ID != cur && !slices.Contains(st.Tried, cands[i].ID) {
			return &cands[i]
		}
	}
	return nil
}

// providerAnswer is what an execution detail keeps of a success.
func providerAnswer(r *provider.Result) map[string]any {
	out := map[string]any{"providerMessageId": r.ProviderMessageID}
	if r.Raw != "" {
		out["answer"] = r.Raw
	}
	return out
}
