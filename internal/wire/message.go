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
//	base      _id, transactionId, content, subject, channel,  yes       yes      yes
//	          read, seen, cta, createdAt
//	record    _templateId … _subscriberId, _feedId,            yes       yes
//	          templateIdentifier, providerId, status,
//	          payload, overrides
//	inbox     archived, subscriber, tags, data                yes                yes
//	delivery  deliveredAt, lastReadDate                                 yes      yes
//
// plus each shape's own fields. A value the message does not have (subject,
// templateIdentifier, providerId, lastReadDate) is null in the feed item and
// the realtime message, which type those fields `T | null`, and left out of
// Message, whose client (@novu/api's MessageResponseDto) refuses null there.

type base struct {
	ID            string          `json:"_id"`
	TransactionID string          `json:"transactionId"`
	Content       string          `json:"content"`
	Subject       optional        `json:"subject,omitzero"`
	Channel       string          `json:"channel"`
	Read          bool            `json:"read"`
	Seen          bool            `json:"seen"`
	CTA           json.RawMessage `json:"cta"`
	CreatedAt     string          `json:"createdAt"`
}

// baseOf maps the fields of every shape; null says how the shape writes a
// value the message does not have.
func baseOf(m *store.Message, null bool) base {
	return base{ID: m.ID, TransactionID: m.TransactionID, Content: m.Content, Subject: optional{v: m.Subject, null: null},
		Channel: m.Channel, Read: m.Read, Seen: m.Seen, CTA: object(m.CTA, "{}"), CreatedAt: Time(m.CreatedAt)}
}

type record struct {
	TemplateID         string          `json:"_templateId"`
	EnvironmentID      string          `json:"_environmentId"`
	OrganizationID     string          `json:"_organizationId"`
	NotificationID     string          `json:"_notificationId"`
	SubscriberID       string          `json:"_subscriberId"`
	FeedID             *string         `json:"_feedId"`
	TemplateIdentifier optional        `json:"templateIdentifier,omitzero"`
	ProviderID         optional        `json:"providerId,omitzero"`
	Status             string          `json:"status"`
	Payload            json.RawMessage `json:"payload"`
	Overrides          json.RawMessage `json:"overrides,omitempty"`
}

func recordOf(m *store.Message, null bool) record {
	return record{TemplateID: m.WorkflowID, EnvironmentID: m.EnvironmentID, OrganizationID: m.OrganizationID,
		NotificationID: m.NotificationID, SubscriberID: m.SubscriberID, TemplateIdentifier: text(m.TemplateIdentifier, null),
		ProviderID: text(m.ProviderID, null), Status: m.Status, Payload: object(m.Payload, "{}"),
		Overrides: json.RawMessage(m.Overrides)}
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
	// snooze creates it anew).
	DeliveredAt  []string `json:"deliveredAt"`
	LastReadDate optional `json:"lastReadDate,omitzero"`
}

func deliveryOf(m *store.Message, null bool) delivery {
	return delivery{DeliveredAt: []string{Time(m.CreatedAt)}, LastReadDate: optional{v: TimePtr(m.LastReadAt), null: null}}
}

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
	record
	inbox
	JobID     string `json:"_jobId"`
	UpdatedAt string `json:"updatedAt"`
	Actor     Actor  `json:"actor"`
}

// FeedItemOf is m, a message of sub, as the v1 feed lists it.
func FeedItemOf(m *store.Message, sub *store.Subscriber) FeedItem {
	return FeedItem{base: baseOf(m, true), record: recordOf(m, true), inbox: inboxOf(m, sub), JobID: m.JobID,
		UpdatedAt: Time(m.UpdatedAt), Actor: actorOf(m.Actor)}
}

// Message is a message of any channel as the messages API answers it
// (OpenAPI Message): GET /v1/messages, mark-as, message actions.
type Message struct {
	base
	record
	delivery
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
	out := Message{base: baseOf(m, false), record: recordOf(m, false), delivery: deliveryOf(m, false),
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
	inbox
	delivery
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
	return Received{base: baseOf(m, true), inbox: inboxOf(m, sub), delivery: deliveryOf(m, true),
		SnoozedUntil: TimePtr(m.SnoozedUntil), FirstSeenDate: TimePtr(m.FirstSeenAt), ArchivedAt: TimePtr(m.ArchivedAt),
		Avatar: m.Avatar, Workflow: wf, Severity: Severity(m.Severity)}
}
