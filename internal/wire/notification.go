package wire

import (
	"encoding/json"

	"github.com/herald-notify/herald/internal/store"
)

// NotificationSubscriber is the subscriber an inbox notification is to.
type NotificationSubscriber struct {
	ID           string  `json:"id"`
	SubscriberID string  `json:"subscriberId"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Avatar       *string `json:"avatar,omitempty"`
}

// Redirect is where a notification or one of its buttons leads.
type Redirect struct {
	URL    string `json:"url"`
	Target string `json:"target,omitempty"`
}

// Action is a button of a notification.
type Action struct {
	Label       string    `json:"label"`
	IsCompleted bool      `json:"isCompleted"`
	Redirect    *Redirect `json:"redirect,omitempty"`
}

// Notification is an in-app message as the inbox shows it (InboxNotification
// of the v2 API and of the inbox clients).
type Notification struct {
	ID              string                 `json:"id"`
	TransactionID   string                 `json:"transactionId"`
	Subject         *string                `json:"subject,omitempty"`
	Body            string                 `json:"body"`
	To              NotificationSubscriber `json:"to"`
	IsRead          bool                   `json:"isRead"`
	IsSeen          bool                   `json:"isSeen"`
	IsArchived      bool                   `json:"isArchived"`
	IsSnoozed       bool                   `json:"isSnoozed"`
	SnoozedUntil    *string                `json:"snoozedUntil"`
	CreatedAt       string                 `json:"createdAt"`
	ReadAt          *string                `json:"readAt"`
	FirstSeenAt     *string                `json:"firstSeenAt"`
	ArchivedAt      *string                `json:"archivedAt"`
	Avatar          *string                `json:"avatar,omitempty"`
	PrimaryAction   *Action                `json:"primaryAction,omitempty"`
	SecondaryAction *Action                `json:"secondaryAction,omitempty"`
	ChannelType     string                 `json:"channelType"`
	Tags            []string               `json:"tags,omitempty"`
	Data            json.RawMessage        `json:"data,omitempty"`
	Redirect        *Redirect              `json:"redirect,omitempty"`
	Workflow        *Workflow              `json:"workflow,omitempty"`
	Severity        string                 `json:"severity"`
}

// storedCTA is the part of a message's cta the inbox reads.
type storedCTA struct {
	Data struct {
		URL    string `json:"url"`
		Target string `json:"target"`
	} `json:"data"`
	Action struct {
		Status  string `json:"status"`
		Buttons []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
			URL     string `json:"url"`
			Target  string `json:"target"`
		} `json:"buttons"`
		Result struct {
			Type string `json:"type"`
		} `json:"result"`
	} `json:"action"`
}

// NotificationOf is m, an in-app message of sub, as the inbox shows it; wf
// is its workflow (nil when deleted). readAt is set while the message is
// read, firstSeenAt while it is seen; its cta's data.url is the
// notification's redirect, its buttons the actions.
func NotificationOf(m *store.Message, sub *store.Subscriber, wf *Workflow) Notification {
	out := Notification{ID: m.ID, TransactionID: m.TransactionID, Subject: m.Subject, Body: m.Content,
		To: NotificationSubscriber{ID: sub.ID, SubscriberID: sub.SubscriberID, FirstName: sub.FirstName,
			LastName: sub.LastName, Avatar: sub.Avatar},
		IsRead: m.Read, IsSeen: m.Seen, IsArchived: m.Archived, IsSnoozed: m.SnoozedUntil != nil,
		SnoozedUntil: TimePtr(m.SnoozedUntil), CreatedAt: Time(m.CreatedAt), ArchivedAt: TimePtr(m.ArchivedAt),
		Avatar: m.Avatar, ChannelType: "in_app", Tags: m.Tags, Workflow: wf, Severity: Severity(m.Severity)}
	if m.Read {
		out.ReadAt = TimePtr(m.LastReadAt)
	}
	if m.Seen {
		out.FirstSeenAt = TimePtr(m.FirstSeenAt)
	}
	if isObject(m.Data) {
		out.Data = json.RawMessage(m.Data)
	}
	var cta storedCTA
	_ = json.Unmarshal(m.CTA, &cta)
	if cta.Data.URL != "" {
		out.Redirect = &Redirect{URL: cta.Data.URL, Target: cta.Data.Target}
	}
	for _, b := range cta.Action.Buttons {
		a := &Action{Label: b.Content, IsCompleted: cta.Action.Status == "done" && cta.Action.Result.Type == b.Type}
		if b.URL != "" {
			a.Redirect = &Redirect{URL: b.URL, Target: b.Target}
		}
		switch {
		case b.Type == "primary" && out.PrimaryAction == nil:
			out.PrimaryAction = a
		case b.Type == "secondary" && out.SecondaryAction == nil:
			out.SecondaryAction = a
		}
	}
	return out
}
