package realtime

import (
	"encoding/json"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// The stored-message shape of notification_received (the inbox protocol,
// §7): the client maps it to its notification itself.

type messageSubscriberJSON struct {
	ID           string  `json:"_id"`
	SubscriberID string  `json:"subscriberId"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Avatar       *string `json:"avatar,omitempty"`
}

type messageWorkflowJSON struct {
	ID         string   `json:"id"`
	Identifier string   `json:"identifier"`
	Name       string   `json:"name"`
	Critical   bool     `json:"critical"`
	Tags       []string `json:"tags"`
	Severity   string   `json:"severity"`
}

type storedMessageJSON struct {
	ID            string                `json:"_id"`
	TransactionID string                `json:"transactionId"`
	Subject       *string               `json:"subject"`
	Content       string                `json:"content"`
	Channel       string                `json:"channel"`
	Read          bool                  `json:"read"`
	Seen          bool                  `json:"seen"`
	Archived      bool                  `json:"archived"`
	SnoozedUntil  *string               `json:"snoozedUntil"`
	DeliveredAt   []string              `json:"deliveredAt"`
	CreatedAt     string                `json:"createdAt"`
	LastReadDate  *string               `json:"lastReadDate"`
	FirstSeenDate *string               `json:"firstSeenDate"`
	ArchivedAt    *string               `json:"archivedAt"`
	Avatar        *string               `json:"avatar"`
	Subscriber    messageSubscriberJSON `json:"subscriber"`
	CTA           json.RawMessage       `json:"cta"`
	Tags          []string              `json:"tags"`
	Data          json.RawMessage       `json:"data"`
	Workflow      *messageWorkflowJSON  `json:"workflow,omitempty"`
	Severity      string                `json:"severity"`
}

func timeText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func timePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timeText(*t)
	return &s
}

func orNone(s string) string {
	if s == "" {
		return store.SeverityNone
	}
	return s
}

// storedMessage is m in the stored-message shape. Its cta is always an
// object with a type and data (the client reads cta.action unguarded).
func storedMessage(m store.Message, sub store.Subscriber, wf *store.Workflow) storedMessageJSON {
	out := storedMessageJSON{ID: m.ID, TransactionID: m.TransactionID, Subject: m.Subject, Content: m.Content,
		Channel: "in_app", Read: m.Read, Seen: m.Seen, Archived: m.Archived, SnoozedUntil: timePtr(m.SnoozedUntil),
		DeliveredAt: []string{}, CreatedAt: timeText(m.CreatedAt), FirstSeenDate: timePtr(m.FirstSeenAt),
		ArchivedAt: timePtr(m.ArchivedAt), Avatar: m.Avatar, Tags: m.Tags, Data: json.RawMessage("{}"),
		Subscriber: messageSubscriberJSON{ID: m.SubscriberID, SubscriberID: sub.SubscriberID, FirstName: sub.FirstName,
			LastName: sub.LastName, Avatar: sub.Avatar},
		Severity: orNone(m.Severity)}
	if m.Read {
		out.LastReadDate = timePtr(m.LastReadAt)
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if len(m.Data) > 0 && m.Data[0] == '{' {
		out.Data = json.RawMessage(m.Data)
	}
	cta := map[string]json.RawMessage{}
	if len(m.CTA) > 0 {
		_ = json.Unmarshal(m.CTA, &cta)
	}
	if cta == nil {
		cta = map[string]json.RawMessage{}
	}
	if _, ok := cta["type"]; !ok {
		cta["type"] = json.RawMessage(`"redirect"`)
	}
	if d, ok := cta["data"]; !ok || len(d) == 0 || d[0] != '{' {
		cta["data"] = json.RawMessage("{}")
	}
	out.CTA, _ = json.Marshal(cta)
	if wf != nil {
		tags := wf.Tags
		if tags == nil {
			tags = []string{}
		}
		out.Workflow = &messageWorkflowJSON{ID: wf.ID, Identifier: wf.Key, Name: wf.Name, Critical: wf.Critical,
			Tags: tags, Severity: orNone(wf.Severity)}
	}
	return out
}
