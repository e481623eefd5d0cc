package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// deliveryEventWrites are the write-gate cases of the providers' delivery
// events (TestEveryWriteTakesTheGate).
func (f *gateFixture) deliveryEventWrites() map[string]gatedWrite {
	event := func() store.DeliveryEvent {
		return store.DeliveryEvent{IntegrationID: "int-1", ProviderID: "sendgrid", Key: id.New(), Status: "opened",
			OccurredAt: f.at, Raw: "{}", Detail: "opened"}
	}
	return map[string]gatedWrite{
		"DeliveryEventsAdd": {call: func(ctx context.Context) error {
			_, err := f.db.DeliveryEventsAdd(ctx, &store.DeliveryEventsAddParams{Scope: f.scope, Events: []store.DeliveryEvent{event()},
				Now: f.at})
			return err
		}},
		"DeliveryEventsRecord": {setup: func(t *testing.T) {
			m := f.message(t)
			e := event()
			e.MessageID = m.ID
			_, err := f.db.DeliveryEventsAdd(t.Context(), &store.DeliveryEventsAddParams{Scope: f.scope, Events: []store.DeliveryEvent{e},
				Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			res, err := f.db.DeliveryEventsRecord(ctx, &store.DeliveryEventsRecordParams{Limit: 10, MatchFor: time.Minute, Now: f.at})
			if err == nil && len(res.Recorded) == 0 {
				err = context.Canceled // it found no work: the case proves nothing
			}
			return err
		}},
	}
}
