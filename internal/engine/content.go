package engine

import (
	"encoding/json"
	"strings"

	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// overrides is a trigger's overrides object, decoded.
type overrides map[string]any

func readOverrides(raw store.JSON) overrides {
	var o overrides
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &o)
	}
	return o
}

// channel returns overrides.<channel> (email, sms, chat, push).
func (o overrides) channel(ch string) map[string]any {
	m, _ := o[ch].(map[string]any)
	return m
}

// pinned is overrides.<channel>.integrationIdentifier: the trigger chose the integration.
func (o overrides) pinned(ch string) string {
	return strings.TrimSpace(str(o.channel(ch)["integrationIdentifier"]))
}

// provider returns what is merged into a provider's request for a step:
// overrides.providers.<providerId>, then overrides.steps.<stepId>.providers.<providerId>
// on top (Novu's per-step overrides).
func (o overrides) provider(stepID, id string) map[string]any {
	ps, _ := o["providers"].(map[string]any)
	m, _ := ps[id].(map[string]any)
	steps, _ := o["steps"].(map[string]any)
	st, _ := steps[stepID].(map[string]any)
	sps, _ := st["providers"].(map[string]any)
	if sm, ok := sps[id].(map[string]any); ok {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		return provider.Merge(out, sm)
	}
	return m
}

// strings reads a string or an array of strings.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		if s := strings.TrimSpace(x); s != "" {
			return []string{s}
		}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	}
	return nil
}

func appendNew(list []string, more ...string) []string {
	for _, s := range more {
		dup := false
		for _, x := range list {
			if strings.EqualFold(x, s) {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, s)
		}
	}
	return list
}

// emailMessage builds an e-mail from the step's rendered controls (subject,
// body as HTML) and overrides.email (to adds recipients; from, senderName,
// replyTo, cc, bcc, text, html, headers replace). It has no recipient when
// the subscriber has no e-mail and the trigger added none.
func emailMessage(c store.Claimed, ctl map[string]any, ov overrides) *provider.Message {
	m := &provider.Message{Subject: str(ctl["subject"]), HTML: str(ctl["body"])}
	if c.Subscriber.Email != nil && strings.TrimSpace(*c.Subscriber.Email) != "" {
		m.To = []string{strings.TrimSpace(*c.Subscriber.Email)}
	}
	e := ov.channel("email")
	m.To = appendNew(m.To, stringsOf(e["to"])...)
	m.Cc, m.Bcc = stringsOf(e["cc"]), stringsOf(e["bcc"])
	m.From, m.SenderName, m.ReplyTo = str(e["from"]), str(e["senderName"]), str(e["replyTo"])
	if h, ok := e["html"].(string); ok && h != "" {
		m.HTML = h
	}
	m.Text = htmlToText(m.HTML)
	if t, ok := e["text"].(string); ok && t != "" {
		m.Text = t
	}
	if hs, ok := e["headers"].(map[string]any); ok {
		m.Headers = map[string]string{}
		for k, v := range hs {
			if s, ok := v.(string); ok && validHeader(k, s) {
				m.Headers[k] = s
			}
		}
	}
	return m
}

// validHeader refuses header names and values that could inject headers.
func validHeader(k, v string) bool {
	if k == "" || strings.ContainsAny(k, " :\r\n\t") || strings.ContainsAny(v, "\r\n") {
		return false
	}
	for _, r := range k {
		if r < 33 || r > 126 {
			return false
		}
	}
	return true
}

// smsMessage builds an SMS to the subscriber's phone (overrides.sms.to wins).
func smsMessage(c store.Claimed, ctl map[string]any, ov overrides) *provider.Message {
	m := &provider.Message{Content: str(ctl["body"])}
	phone := deref(c.Subscriber.Phone)
	if to := stringsOf(ov.channel("sms")["to"]); len(to) > 0 {
		phone = to[0]
	}
	if p := strings.TrimSpace(phone); p != "" {
		m.To = []string{p}
	}
	return m
}

// webhookContext describes the trigger to webhook providers.
func webhookContext(m *provider.Message, c store.Claimed, step *store.Step) {
	var p map[string]any
	if len(c.Notification.Payload) > 0 {
		_ = json.Unmarshal(c.Notification.Payload, &p)
	}
	m.Payload = p
	// The templates' bindings hold the engine's ordered maps; providers send plain JSON.
	m.Subscriber, _ = liquid.ToGo(bindings(c.Subscriber, nil, nil)["subscriber"]).(map[string]any)
	m.Step = map[string]any{"stepId": step.StepID, "name": step.Name, "type": step.Type,
		"transactionId": c.Job.TransactionID, "workflowId": c.Workflow.Key}
}
