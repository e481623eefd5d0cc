package wire

import (
	"encoding/json"

	"github.com/herald-notify/herald/internal/store"
)

// The v1 message object is the stored message as the established service
// sends it. Its three shapes are built from groups of fields, each group
// mapped once:
//
//	group     fields                                          FeedItem  Message  Received
//	base      _id, transactionId, content, channel, read,      yes       yes      yes
//	          seen, cta, createdAt
//	subject   subject                                         null      left out null
//	record    _templateId … _subscriberId, _feedId, status,   yes       yes
//	          payload, overrides
//	names     templateIdentifier, providerId                  null      left out
//	inbox     archived, subscriber, tags, data                yes                yes
//	delivery  deliveredAt                                               yes      yes
//	lastRead  lastReadDate                                              left out null
//
// plus each shape's own fields. The groups of values a message may not have
// (subject, names, lastRead) are written as the shape types them: null
// where it types the field `T | null` (the feed item, the realtime
// message), left out where it is optional (Message: @novu/api's
// MessageResponseDto refuses null there). Each comes as a pair of types
// that differ only in their tags — the …Optional one is the other converted
// — so the compiler keeps their fields one.

type base struct {
	ID            string          `json:"_id"`
	TransactionID string          `json:"transactionId"`
	Content       string          `json:"content"`
	Channel       string          `json:"channel"`
	Read          bool            `json:"read"`
	Seen          bool            `json:"seen"`
	CTA           json.RawMessage `json:"cta"`
	CreatedAt     string          `json:"createdAt"`
}

// baseOf maps the fields every shape has.
func baseOf(m *store.Message) base {
	return base{ID: m.ID, TransactionID: m.TransactionID, Content: m.Content, Channel: m.Channel, Read: m.Read,
		Seen: m.Seen, CTA: object(m.CTA, "{}"), CreatedAt: Time(m.CreatedAt)}
}

type subject struct {
	Subject *string `json:"subject"`
}

type subjectOptional struct {
	Subject *string `json:"subject,omitempty"`
}

func subjectOf(m *store.Message) subject { return subject{Subject: m.Subject} }

type record struct {
	TemplateID     string          `json:"_templateId"`
	EnvironmentID  string          `json:"_environmentId"`
	OrganizationID string          `json:"_organizationId"`
	NotificationID string          `json:"_notificationId"`
	SubscriberID   string          `json:"_subscriberId"`
	FeedID         *string         `json:"_feedId"`
	Status         string          `json:"status"`
	Payload        json.RawMessage `json:"payload"`
	Overrides      json.RawMessage `json:"overrides,omitempty"`
}

func recordOf(m *store.Message) record {
	return record{TemplateID: m.WorkflowID, EnvironmentID: m.EnvironmentID, OrganizationID: m.OrganizationID,
		NotificationID: m.NotificationID, SubscriberID: m.SubscriberID, Status: m.Status, Payload: object(m.Payload, "{}"),
		Overrides: json.RawMessage(m.Overrides)}
}

type names struct {
	TemplateIdentifier *string `json:"templateIdentifier"`
	ProviderID         *string `json:"providerId"`
}

type namesOptional struct {
	TemplateIdentifier *string `json:"templateIdentifier,omitempty"`
	ProviderID         *string `json:"providerId,omitempty"`
}

func namesOf(m *store.Message) names {
	return names{TemplateIdentifier: nonEmpty(&m.TemplateIdentifier), ProviderID: nonEmpty(&m.ProviderID)}
}

// nonEmpty is s, nil when empty (s points into the message: no copy).
func nonEmpty(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}

// Subscriber is the subscriber as a v1 message embeds it.
type Subscriber struct {
	ID           string  `json:"_id"`
	SubscriberID string  `json:"subscriberId"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Avatar       *string `json:"avatar,omitempty"`
}

type inbox struct {
	Archived   bool            `json:"archived"`
	Subscriber Subscriber      `json:"subscriber"`
	Tags       []string        `json:"tags"`
	Data       json.RawMessage `json:"data"`
}

func inboxOf(m *store.Message, sub *store.Subscriber) inbox {
	return inbox{Archived: m.Archived, Subscriber: Subscriber{ID: m.SubscriberID, SubscriberID: sub.SubscriberID,
		FirstName: sub.FirstName, LastName: sub.LastName, Avatar: sub.Avatar}, Tags: orEmpty(m.Tags), Data: object(m.Data, "{}")}
}

type delivery struct {
	// DeliveredAt: a message is delivered when it is created (the end of a
	// snooze creates it anew), unless its provider said when it delivered
	// it (a recorded `delivered` event).
	DeliveredAt []string `json:"deliveredAt"`
}

func deliveryOf(m *store.Message) delivery {
	if m.DeliveredAt != nil {
		return delivery{DeliveredAt: []string{Time(*m.DeliveredAt)}}
	}
	return delivery{DeliveredAt: []string{Time(m.CreatedAt)}}
}

type lastRead struct {
	LastReadDate *string `json:"lastReadDate"`
}

type lastReadOptional struct {
	LastReadDate *string `json:"lastReadDate,omitempty"`
}

func lastReadOf(m *store.Message) lastRead { return lastRead{LastReadDate: TimePtr(m.LastReadAt)} }

// Actor is the actor of a feed item.
type Actor struct {
	Type string  `json:"type"`
	Data *string `json:"data"`
}

func actorOf(raw store.JSON) Actor {
	a := Actor{Type: "none"}
	if len(raw) > 0 {
		var v Actor
		if json.Unmarshal(raw, &v) == nil && v.Type != "" {
			a = v
		}
	}
	return a
}

// FeedItem is a message of the v1 feed (OpenAPI NotificationFeedItem).
type FeedItem struct {
	base
	subject
	record
	names
	inbox
	JobID     string `json:"_jobId"`
	UpdatedAt string `json:"updatedAt"`
	Actor     Actor  `json:"actor"`
}

// FeedItemOf is m, a message of sub, as the v1 feed lists it.
func FeedItemOf(m *store.Message, sub *store.Subscriber) FeedItem {
	return FeedItem{base: baseOf(m), subject: subjectOf(m), record: recordOf(m), names: namesOf(m), inbox: inboxOf(m, sub),
		JobID: m.JobID, UpdatedAt: Time(m.UpdatedAt), Actor: actorOf(m.Actor)}
}

// Message is a message of any channel as the messages API answers it
// (OpenAPI Message): GET /v1/messages, mark-as, message actions.
type Message struct {
	base
	subjectOptional
	record
	namesOptional
	delivery
	lastReadOptional
	MessageTemplateID *string  `json:"_messageTemplateId"`
	LastSeenDate      *string  `json:"lastSeenDate,omitempty"`
	IntegrationID     string   `json:"_integrationId,omitempty"`
	ProviderMessageID string   `json:"providerMessageId,omitempty"`
	Email             string   `json:"email,omitempty"`
	Phone             string   `json:"phone,omitempty"`
	DeviceTokens      []string `json:"deviceTokens,omitempty"`
	ErrorText         string   `json:"errorText,omitempty"`
}

// MessageOf is m as the messages API answers it: where it went comes from
// its stored delivery.
func MessageOf(m *store.Message) Message {
	out := Message{base: baseOf(m), subjectOptional: subjectOptional(subjectOf(m)), record: recordOf(m),
		namesOptional: namesOptional(namesOf(m)), delivery: deliveryOf(m), lastReadOptional: lastReadOptional(lastReadOf(m)),
		LastSeenDate: TimePtr(m.LastSeenAt), IntegrationID: m.IntegrationID, ProviderMessageID: m.ProviderMessageID,
		ErrorText: m.ErrorText}
	if len(m.Delivery) > 0 {
		var d struct {
			To           []string `json:"to"`
			Phone        string   `json:"phone"`
			DeviceTokens []string `json:"deviceTokens"`
		}
		_ = json.Unmarshal(m.Delivery, &d)
		if len(d.To) > 0 {
			out.Email = d.To[0]
		}
		out.Phone, out.DeviceTokens = d.Phone, d.DeviceTokens
	}
	return out
}

// MessagesOf is MessageOf of each message.
func MessagesOf(ms []store.Message) []Message {
	out := make([]Message, 0, len(ms))
	for i := range ms {
		out = append(out, MessageOf(&ms[i]))
	}
	return out
}

// Received is an in-app message as the realtime notification_received
// event carries it (OpenAPI ReceivedMessage: the stored-message shape, which
// @novu/js maps to its notification itself; docs/api-behaviour.md, "Realtime").
type Received struct {
	base
	subject
	inbox
	delivery
	lastRead
	SnoozedUntil  *string   `json:"snoozedUntil"`
	FirstSeenDate *string   `json:"firstSeenDate"`
	ArchivedAt    *string   `json:"archivedAt"`
	Avatar        *string   `json:"avatar"`
	Workflow      *Workflow `json:"workflow,omitempty"`
	Severity      string    `json:"severity"`
}

// ReceivedOf is m, a new message of sub, as the realtime event carries it;
// wf is its workflow (nil when deleted).
func ReceivedOf(m *store.Message, sub *store.Subscriber, wf *Workflow) Received {
	return Received{base: baseOf(m), subject: subjectOf(m), inbox: inboxOf(m, sub), delivery: deliveryOf(m), lastRead: lastReadOf(m),
		SnoozedUntil: TimePtr(m.SnoozedUntil), FirstSeenDate: TimePtr(m.FirstSeenAt), ArchivedAt: TimePtr(m.ArchivedAt),
		Avatar: m.Avatar, Workflow: wf, Severity: Severity(m.Severity)}
}
