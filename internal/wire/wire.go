// Package wire turns a stored message into the JSON the clients read: one
// builder per family of wire shapes, each field mapped in one place.
//
//   - The v1 message object (message.go): FeedItemOf for the v1 feed,
//     MessageOf for GET /v1/messages, mark-as and message actions, ReceivedOf
//     for the realtime notification_received event (socket.io and SSE). The
//     three shapes share their common fields' mapping and differ only in
//     which fields they carry and in how they write a value a message does
//     not have (null or left out), as their clients require.
//   - The inbox notification (notification.go): NotificationOf for
//     /v2/subscribers/{subscriberId}/notifications… and /v1/inbox/notifications….
//
// The OpenAPI document (internal/httpapi/openapi.yaml) has one schema per
// shape: NotificationFeedItem, Message, ReceivedMessage, InboxNotification.
package wire

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Time is t as every answer writes a time: RFC 3339 in UTC, milliseconds, Z.
func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// TimePtr is Time of t, nil for nil.
func TimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}

// Severity is a stored severity as the clients read it: "none" for "".
func Severity(s string) string {
	if s == "" {
		return store.SeverityNone
	}
	return s
}

// Workflow is a message's workflow as the inbox clients read it, in the
// inbox notification and in the realtime message alike.
type Workflow struct {
	ID         string   `json:"id"`
	Identifier string   `json:"identifier"`
	Name       string   `json:"name"`
	Critical   bool     `json:"critical"`
	Tags       []string `json:"tags"`
	Severity   string   `json:"severity"`
}

// WorkflowOf is w as a message carries it.
func WorkflowOf(w store.Workflow) Workflow {
	return Workflow{ID: w.ID, Identifier: w.Key, Name: w.Name, Critical: w.Critical, Tags: orEmpty(w.Tags),
		Severity: Severity(w.Severity)}
}

func orEmpty(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}

// isObject reports whether stored JSON is an object.
func isObject(v store.JSON) bool {
	t := bytes.TrimLeft(v, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// object is stored JSON when it is an object, else def.
func object(v store.JSON, def string) json.RawMessage {
	if isObject(v) {
		return json.RawMessage(v)
	}
	return json.RawMessage(def)
}
