package sqlstore

import (
	"context"

	"github.com/herald-notify/herald/internal/store"
)

// bulkCols are the columns a bulk load fills; the others keep their
// defaults.
var bulkCols = []string{"id", "organization_id", "environment_id", "subscriber_id", "first_name", "last_name",
	"email", "phone", "avatar", "locale", "timezone", "data", "created_at", "updated_at"}

func bulkRow(s *store.Subscriber) []any {
	return []any{s.ID, s.OrganizationID, s.EnvironmentID, s.SubscriberID, s.FirstName, s.LastName, s.Email,
		s.Phone, s.Avatar, s.Locale, s.Timezone, nullJSON(s.Data), ms(s.CreatedAt), ms(s.UpdatedAt)}
}

// SubscriberBulkLoad inserts many new subscribers, all or none, for seeding
// millions: through COPY on
// PostgreSQL, and on SQLite through statements prepared once per batch with
// anonymous placeholders (binding thousands of numbered ones costs time
// quadratic in their count). A subscriberId that exists is store.ErrConflict.
func (db *DB) SubscriberBulkLoad(ctx context.Context, subs []store.Subscriber) error {
	return db.d.loadSubscribers(db, ctx, subs)
}
