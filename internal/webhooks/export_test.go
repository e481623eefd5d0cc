package webhooks

import (
	"context"

	"github.com/herald-notify/herald/internal/store"
)

// Emit stores events of the scope's environment outside any outbox entry,
// as a drain stores an entry's (the sender's tests).
func (s *Service) Emit(ctx context.Context, scope store.Scope, events ...Event) {
	if err := s.emit(ctx, scope, nil, events); err != nil {
		s.log.ErrorContext(ctx, "webhooks: storing events", "err", err)
	}
}
