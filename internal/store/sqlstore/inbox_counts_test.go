package sqlstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestInboxCountsStayExact: after inserts, mark-as of every kind, mark-all
// and deletes — some concurrent — the counts the feed and the unseen count
// answer from equal a count of the messages themselves, for every filter.
func TestInboxCountsStayExact(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		envID, scope := inboxScope(t, db)
		subs := []string{id.New(), id.New()}
		var all []string
		for i := range 60 {
			m := &store.Message{ID: id.New(), OrganizationID: scope.OrganizationID, EnvironmentID: envID,
				NotificationID: id.New(), JobID: id.New(), SubscriberID: subs[i%2], WorkflowID: id.New(),
				TemplateIdentifier: "wf", TransactionID: "tx", Channel: "in_app", ProviderID: "svc", Content: "c",
				Status: "sent", CreatedAt: time.UnixMilli(int64(1000 + i)), UpdatedAt: time.UnixMilli(int64(1000 + i))}
			// The same job twice: the second insert is a no-op and must not count.
			require.NoError(t, insertMessageTwice(ctx, db, m))
			all = append(all, m.ID)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		marks := []string{store.MarkRead, store.MarkUnread, store.MarkSeen, store.MarkUnseen}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 9))
				for range 15 {
					ids := []string{all[r.IntN(len(all))], all[r.IntN(len(all))], all[r.IntN(len(all))]}
					for _, sub := range subs {
						_, err := db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: scope, SubscriberID: sub, IDs: ids,
							MarkAs: marks[r.IntN(4)], Now: time.Now()})
						require.NoError(t, err)
					}
				}
			}()
		}
		wg.Wait()
		_, err := db.MessageMarkAll(ctx, &store.MessageMarkAllParams{Scope: scope, SubscriberID: subs[0], MarkAs: store.MarkSeen,
			Now: time.Now()})
		require.NoError(t, err)
		for range 5 {
			_ = db.MessageDelete(ctx, &store.MessageDeleteParams{Scope: scope, MessageID: all[rng.IntN(len(all))], Now: time.Now()})
		}
		_, err = db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: scope, SubscriberID: subs[1], IDs: all[:10],
			MarkAs: store.MarkRead, Now: time.Now()})
		require.NoError(t, err)

		f, tr := false, true
		bools := []*bool{nil, &f, &tr}
		for _, sub := range subs {
			for _, read := range bools {
				for _, seen := range bools {
					var want int
					q := "SELECT count(*) FROM messages WHERE subscriber_id = $1 AND channel = 'in_app' AND deleted = false"
					args := []any{sub}
					if read != nil {
						q += fmt.Sprintf(" AND read = $%d", len(args)+1)
						args = append(args, *read)
					}
					if seen != nil {
						q += fmt.Sprintf(" AND seen = $%d", len(args)+1)
						args = append(args, *seen)
					}
					require.NoError(t, db.Reader().QueryRow(q, args...).Scan(&want))
					page, err := db.MessageFeed(ctx, &store.FeedParams{Scope: scope, SubscriberID: sub, Read: read, Seen: seen,
						Page: 1, Limit: 1, Now: time.Now()})
					require.NoError(t, err)
					require.Equal(t, want, page.TotalCount, "read=%v seen=%v", fmtBool(read), fmtBool(seen))
				}
			}
			unseen, err := db.MessageUnseenCount(ctx, &store.MessageUnseenCountParams{Scope: scope, SubscriberID: sub, Now: time.Now()})
			require.NoError(t, err)
			var want int
			require.NoError(t, db.Reader().QueryRow("SELECT count(*) FROM messages WHERE subscriber_id = $1 AND deleted = false AND seen = false", sub).Scan(&want))
			require.Equal(t, want, unseen)
		}

		// A rebuild from the messages agrees with the maintained counts.
		before := countsRows(t, db)
		require.NoError(t, db.RebuildInboxCounts(ctx))
		require.Equal(t, before, countsRows(t, db))
	})
}

func fmtBool(b *bool) string {
	if b == nil {
		return "any"
	}
	return fmt.Sprint(*b)
}

// countsRows are the inbox counts by subscriber, state and tag set, rows of
// zeros left out (a rebuild does not write them).
func countsRows(t *testing.T, db *sqlstore.DB) map[string][4]int {
	rows, err := db.Reader().Query("SELECT subscriber_id, state, tags, unread_unseen, unread_seen, read_unseen, read_seen FROM inbox_counts")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string][4]int{}
	for rows.Next() {
		var s, tags string
		var st int
		var c [4]int
		require.NoError(t, rows.Scan(&s, &st, &tags, &c[0], &c[1], &c[2], &c[3]))
		if c != [4]int{} {
			out[fmt.Sprintf("%s/%d/%s", s, st, tags)] = c
		}
	}
	return out
}

func insertMessageTwice(ctx context.Context, db *sqlstore.DB, m *store.Message) error {
	if err := db.InsertMessageForTest(ctx, m); err != nil {
		return err
	}
	again := *m
	again.ID = id.New()
	return db.InsertMessageForTest(ctx, &again)
}

func inboxScope(t *testing.T, db *sqlstore.DB) (string, store.Scope) {
	tn := setup(t, db)
	return tn.A.EnvironmentID, tn.A
}
