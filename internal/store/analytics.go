package store

import (
	"context"
	"time"
)

// MessageDailyCountsParams selects the messages the dashboard's Analytics
// counts: the scope's, created on the Days UTC days that end with Now's.
type MessageDailyCountsParams struct {
	Scope
	// Days is how many UTC days are counted, Now's included (1 to 366).
	Days int
	Now  time.Time
}

// MessageDayCount counts the messages of one channel created on one UTC
// day, by outcome. A message counts on the day it was created, whenever its
// outcome came; a deleted message counts as well (it was sent).
type MessageDayCount struct {
	// Day is the day's UTC midnight.
	Day     time.Time
	Channel string
	// Messages counts them all; Sent those of status sent (accepted by the
	// provider, or an in-app message created), Failed those of status error.
	Messages, Sent, Failed int64
	// Delivered counts those a provider's `delivered` event was recorded on
	// (deliveredAt) and the in-app messages created; Opened those with an
	// `opened` provider event recorded (delivery events, execution details
	// of source Webhook).
	Delivered, Opened int64
}

// Analytics counts an environment's messages for the dashboard.
type Analytics interface {
	// MessageDailyCounts counts the messages by UTC day and channel, in one
	// statement; days and channels without messages are left out.
	MessageDailyCounts(ctx context.Context, p *MessageDailyCountsParams) ([]MessageDayCount, error)
}
