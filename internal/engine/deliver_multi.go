package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// target is one destination of a chat or push job.
type target struct {
	key    string
	in     store.Integration
	url    string   // chat
	chat   string   // chat: the subscriber's channel name
	tokens []string // push
}

// entriesOf are the subscriber's channel entries that belong to an
// integration: by its id, or by provider when the entry names none.
func entriesOf(sub store.Subscriber, in store.Integration) []store.ChannelSettings {
	var out []store.ChannelSettings
	for _, ch := range sub.Channels {
		if ch.IntegrationID == in.ID || (ch.IntegrationID == "" && ch.ProviderID == in.ProviderID) {
			out = append(out, ch)
		}
	}
	return out
}

// chatTargets: every chat credential of the subscriber for an active chat
// integration; its webhookUrl wins over the integration's.
func chatTargets(sub store.Subscriber, cands []store.Integration) []target {
	var out []target
	for _, in := range cands {
		creds, _ := provider.ParseCredentials(in.Credentials)
		for _, ch := range entriesOf(sub, in) {
			u := ch.Credentials.WebhookURL
			if u == "" {
				u = creds.String("webhookUrl")
			}
			if u == "" {
				continue
			}
			h := sha256.Sum256([]byte(u))
			out = append(out, target{key: "chat:" + in.ID + ":" + hex.EncodeToString(h[:8]), in: in, url: u,
				chat: ch.Credentials.Channel})
		}
	}
	return out
}

// pushTargets: for each active push integration, the subscriber's device tokens for it.
func pushTargets(sub store.Subscriber, cands []store.Integration) []target {
	var out []target
	for _, in := range cands {
		var tokens []string
		for _, ch := range entriesOf(sub, in) {
			tokens = appendNew(tokens, ch.Credentials.DeviceTokens...)
		}
		if len(tokens) > 0 {
			out = append(out, target{key: "push:" + in.ID, in: in, tokens: tokens})
		}
	}
	return out
}

// deliverMany sends a chat or push job to each of its targets not done in
// an earlier run. Targets that fail transiently are retried together with
// backoff; the others keep their message. The job fails when no target got
// the message.
func (e *Engine) deliverMany(ctx context.Context, o store.JobOutcome, c store.Claimed, step *store.Step,
	ctl map[string]any, targets []target, st deliveryState, ov overrides) store.JobOutcome {
	if len(targets) == 0 {
		if step.Type == "chat" {
			return e.fail(o, "Payload", "Webhook URL for the chat channel is missing")
		}
		return e.fail(o, "Payload", "Subscriber credentials is missing the tokens for sending a push notification message")
	}
	deadline := time.Now().Add(e.o.Lease / 2)
	var transient *provider.Error
	sent, failed := 0, 0
	for _, t := range targets {
		if slices.Contains(st.Done, t.key) {
			sent++ // delivered in an earlier run
			continue
		}
		if time.Now().After(deadline) {
			transient = &provider.Error{Class: provider.Transient, Reason: "the job ran out of time before this target"}
			continue
		}
		msg := &provider.Message{ID: deliveryID(c.Job.ID, t.in.ID, t.key), IdempotencyKey: idempotencyKey(c.Job.ID, t.in.ID, t.key),
			Content: str(ctl["body"])}
		msg.Overrides, msg.Passthrough = provider.SplitPassthrough(ov.provider(step.StepID, t.in.ProviderID))
		webhookContext(msg, c, step)
		var where any
		subject := optStr(ctl["subject"])
		if step.Type == "chat" {
			msg.WebhookURL, msg.ChatChannel = t.url, t.chat
			host := ""
			if u, err := url.Parse(t.url); err == nil {
				host = u.Host
			}
			where = map[string]any{"webhookHost": host}
		} else {
			msg.Subject, msg.Tokens = str(ctl["subject"]), t.tokens
			if d, ok := ctl["data"].(map[string]any); ok {
				msg.Data = d
			}
			where = map[string]any{"deviceTokens": t.tokens}
		}
		o.Details = append(o.Details, e.providerDetail(o, t.in, "Pending", "Start sending message", nil),
			e.providerDetail(o, t.in, "Pending", "Integration instance selected", integrationRaw(t.in)))
		a := &attempt{in: t.in, msg: msg, target: t.key}
		e.send(ctx, a)
		e.dropInvalidTokens(ctx, &o, c, t.in, a)
		switch {
		case a.err == nil:
			m := e.message(c, step.Type, a, msg.Content, subject, where)
			o.Messages = append(o.Messages, m)
			o.Details = append(o.Details, e.providerDetail(o, t.in, "Pending", "Message created", map[string]string{"messageId": m.ID}),
				e.providerDetail(o, t.in, "Success", "Message sent", providerAnswer(a.res)))
			st.Done, sent = append(st.Done, t.key), sent+1
		case a.err.Class == provider.Transient && st.Attempts+1 < e.o.Delivery.Attempts:
			transient = a.err
			e.o.Metrics.MessageOutcome(step.Type, t.in.ProviderID, metrics.OutcomeRetry)
			o.Details = append(o.Details, e.providerDetail(o, t.in, "Warning", "Temporary provider error: "+a.err.Error(), errorRaw(a.err)))
		default:
			o.Messages = append(o.Messages, e.message(c, step.Type, a, msg.Content, subject, where))
			o.Details = append(o.Details, e.providerDetail(o, t.in, "Failed", "Unexpected provider error", errorRaw(a.err)))
			st.Done, failed = append(st.Done, t.key), failed+1
			o.Error = "Unexpected provider error: " + a.err.Error()
		}
	}
	if transient != nil {
		st.Attempts++
		wait := retryWait(st.Attempts, transient)
		o.Details = append(o.Details, e.detail(o, "Warning", "Internal", fmt.Sprintf(
			"Retrying the targets that failed temporarily in %s (attempt %d of %d)", wait.Round(time.Millisecond),
			st.Attempts, e.o.Delivery.Attempts), nil))
		return e.requeue(o, st, wait, transient.Error())
	}
	o.Delivery = st.json()
	if sent == 0 {
		o.Status = store.JobFailed
		return o
	}
	o.Status, o.Error = store.JobCompleted, ""
	return o
}

// dropInvalidTokens removes the device tokens a push provider refused as no
// longer valid from the subscriber's credentials of that integration.
func (e *Engine) dropInvalidTokens(ctx context.Context, o *store.JobOutcome, c store.Claimed, in store.Integration, a *attempt) {
	var bad []string
	if a.res != nil {
		bad = a.res.InvalidTokens
	}
	if a.err != nil {
		bad = a.err.InvalidTokens
	}
	if len(bad) == 0 {
		return
	}
	scope := store.Scope{OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID}
	n, err := e.o.Store.SubscriberTokensRemove(ctx, &store.SubscriberTokensRemoveParams{Scope: scope,
		SubscriberID: c.Subscriber.SubscriberID, IntegrationID: in.ID, Tokens: bad, Now: e.now()})
	if err != nil {
		e.log.WarnContext(ctx, "removing invalid device tokens", "err", err)
		o.Details = append(o.Details, e.providerDetail(*o, in, "Warning",
			fmt.Sprintf("The provider refused %d device token(s) as invalid; removing them failed: %v", len(bad), err), nil))
		return
	}
	o.Details = append(o.Details, e.providerDetail(*o, in, "Warning",
		fmt.Sprintf("Removed %d invalid device token(s) from the subscriber's %s credentials", n, in.ProviderID),
		map[string]any{"invalidTokens": len(bad)}))
}
