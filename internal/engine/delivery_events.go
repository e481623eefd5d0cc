package engine

import (
	"context"

	"github.com/herald-notify/herald/internal/deliveryevents"
)

// deliveryEventsLoop records the delivery events providers posted
// (internal/deliveryevents), every poll interval: the API records a post's
// events as soon as it queued them; this takes what a process that stopped
// left queued, and the events tried again for their message. A pass with
// nothing due is one read.
func (e *Engine) deliveryEventsLoop(ctx context.Context) {
	r := deliveryevents.NewRecorder(deliveryevents.RecorderOptions{Store: e.o.Store, Metrics: e.o.Metrics,
		Logger: e.log, Now: e.now})
	e.every(ctx, e.o.Poll, "recording delivery events", func() {
		if n, err := r.Drain(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("recording delivery events", "err", err)
		} else if n > 0 {
			e.log.Debug("recorded delivery events", "count", n)
		}
	})
}
