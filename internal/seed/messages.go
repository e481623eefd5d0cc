package seed

import (
	"context"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// MessageEpoch is the creation time of message 0; message n is created
// MessageSpacing later than message n-1.
var MessageEpoch = time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)

// MessageSpacing is the time between two consecutive messages.
const MessageSpacing = time.Second

// SnoozedUntil is when the snoozed messages of a generator with States come back.
var SnoozedUntil = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

// stateTags are the tag sets of messages with States.
var stateTags = [][]string{{}, {"billing"}, {"social"}, {"billing", "urgent"}}

// HotSubscriber is the number of the subscriber that gets every HotEvery-th
// message: the one whose inbox is large.
const HotSubscriber = 0

// MessageGenerator makes the in-app messages of one environment, spread over
// subscribers 0..Subscribers-1 of a subscriber Generator. Like subscribers,
// message n is always the same: created at MessageEpoch + n×MessageSpacing,
// with an _id (and job, notification and transaction ids) ordered like n,
// for subscriber HotSubscriber when n is a multiple of HotEvery and for an
// evenly hashed other subscriber otherwise. About 60% are read and 80% seen.
// With States, messages also carry the v2 inbox's state: a severity (70%
// none, 10% each of low, medium, high), tags, data, and about 5% archived
// (of the read ones) and 1% snoozed until SnoozedUntil.
type MessageGenerator struct {
	subs *Generator
	// Subscribers is how many subscribers the messages go to.
	Subscribers int
	// HotEvery sends every HotEvery-th message to HotSubscriber (0: none).
	HotEvery int
	// WorkflowID and WorkflowKey name the workflow the messages came from.
	WorkflowID, WorkflowKey string
	// States gives messages severity, tags, data, archives and snoozes.
	States  bool
	middles [4][5]byte // of message, job, notification and transaction ids
}

// NewMessages returns the message generator over the subscribers of subs.
func NewMessages(subs *Generator, subscribers, hotEvery int, workflowID, workflowKey string) *MessageGenerator {
	g := &MessageGenerator{subs: subs, Subscribers: subscribers, HotEvery: hotEvery, WorkflowID: workflowID, WorkflowKey: workflowKey}
	for i := range g.middles {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], mix(subs.seed^uint64(0x6d657373+i)))
		copy(g.middles[i][:], b[:5])
	}
	return g
}

// mix is splitmix64's finalizer: cheap, well-spread bits of n.
func mix(n uint64) uint64 {
	n += 0x9e3779b97f4a7c15
	n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9
	n = (n ^ (n >> 27)) * 0x94d049bb133111eb
	return n ^ (n >> 31)
}

// SubscriberOf is the number of the subscriber message n goes to.
func (g *MessageGenerator) SubscriberOf(n int) int {
	if g.HotEvery > 0 && n%g.HotEvery == 0 || g.Subscribers < 2 {
		return HotSubscriber
	}
	return 1 + int(mix(g.subs.seed+uint64(n))%uint64(g.Subscribers-1))
}

// HotCount is how many of messages 0..total-1 go to HotSubscriber.
func (g *MessageGenerator) HotCount(total int) int {
	if g.HotEvery <= 0 {
		return 0
	}
	return (total + g.HotEvery - 1) / g.HotEvery
}

var messageTexts = []string{
	"Your order #%d has shipped and is on its way.",
	"Ada commented on your post: “Great write-up, thanks!” (#%d)",
	"Your weekly report #%d is ready to view.",
	"Payment #%d was received. Thank you!",
	"Reminder: your trial ends in 3 days (#%d).",
}

// Message returns message n.
func (g *MessageGenerator) Message(n int) store.Message {
	h := mix(g.subs.seed ^ uint64(n)<<1)
	k := g.SubscriberOf(n)
	created := MessageEpoch.Add(time.Duration(n) * MessageSpacing)
	num := strconv.Itoa(n)
	text := messageTexts[h%uint64(len(messageTexts))]
	m := store.Message{
		ID:                 objectID(g.middles[0], created, n),
		OrganizationID:     g.subs.scope.OrganizationID,
		EnvironmentID:      g.subs.scope.EnvironmentID,
		NotificationID:     objectID(g.middles[2], created, n),
		JobID:              objectID(g.middles[1], created, n),
		SubscriberID:       g.subs.objectID(Epoch.Add(time.Duration(k)*Spacing), k),
		WorkflowID:         g.WorkflowID,
		TemplateIdentifier: g.WorkflowKey,
		TransactionID:      objectID(g.middles[3], created, n),
		Channel:            "in_app",
		ProviderID:         "svc",
		Content:            sprintfNum(text, num),
		CTA:                store.JSON(`{"type":"redirect","data":{"url":"/items/` + num + `"}}`),
		Payload:            store.JSON(`{"itemId":` + num + `,"kind":"k` + strconv.Itoa(int(h>>8%5)) + `"}`),
		Tags:               []string{},
		Overrides:          store.JSON(`{}`),
		Status:             "sent",
		CreatedAt:          created,
		UpdatedAt:          created,
	}
	if p := h >> 16 % 10; p < 8 {
		seen := created.Add(time.Duration(h>>24%3600) * time.Second)
		m.Seen, m.LastSeenAt, m.UpdatedAt = true, &seen, seen
		if p < 6 {
			m.Read, m.LastReadAt = true, &seen
		}
	}
	if g.States {
		g.addStates(&m, h)
	}
	return m
}

// addStates gives message m (of hash h) its v2 inbox state.
func (g *MessageGenerator) addStates(m *store.Message, h uint64) {
	m.Severity = store.SeverityNone
	if s := h >> 32 % 10; s >= 7 {
		m.Severity = store.Severities[s-6]
	}
	m.Tags = stateTags[h>>40%uint64(len(stateTags))]
	m.Data = store.JSON(`{"kind":"k` + strconv.Itoa(int(h>>44%5)) + `"}`)
	switch q := h >> 48 % 100; {
	case q < 8 && m.Read: // 8% of the read 60%: about 5%
		m.Archived, m.ArchivedAt = true, m.LastReadAt
	case q == 99:
		until := SnoozedUntil
		if !m.Seen {
			seen := m.CreatedAt
			m.Seen, m.LastSeenAt = true, &seen
		}
		m.SnoozedUntil = &until
	}
	if m.Seen {
		m.FirstSeenAt = m.LastSeenAt
	}
}

// sprintfNum replaces the one %d of text with num (cheaper than fmt for millions).
func sprintfNum(text, num string) string {
	for i := 0; i+1 < len(text); i++ {
		if text[i] == '%' && text[i+1] == 'd' {
			return text[:i] + num + text[i+2:]
		}
	}
	return text
}

// MessageBatch appends messages from (inclusive) to to (exclusive) to dst.
func (g *MessageGenerator) MessageBatch(dst []store.Message, from, to int) []store.Message {
	for n := from; n < to; n++ {
		dst = append(dst, g.Message(n))
	}
	return dst
}

// objectID is an _id of package id's shape with the given middle bytes.
func objectID(middle [5]byte, t time.Time, n int) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(t.Unix()))
	copy(b[4:9], middle[:])
	b[9], b[10], b[11] = byte(n>>16), byte(n>>8), byte(n)
	const hexDigits = "0123456789abcdef"
	var s [24]byte
	for i, c := range b {
		s[2*i], s[2*i+1] = hexDigits[c>>4], hexDigits[c&15]
	}
	return string(s[:])
}

// MessageInsertFunc writes one batch of new messages, such as
// sqlstore.DB.MessageBulkLoad.
type MessageInsertFunc func(ctx context.Context, msgs []store.Message) error

// LoadMessages generates messages From..From+Count-1 of g and inserts them
// in batches, as Load does for subscribers (same options).
func LoadMessages(ctx context.Context, g *MessageGenerator, insert MessageInsertFunc, o LoadOptions) error {
	return loadBatches(ctx, g.MessageBatch, insert, o)
}
