package pipeline

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/seed"
)

// TestInboxBaselineMatchesHTTP checks, on a small inbox dataset of each
// store, that the SQL the inbox benchmarks time as the baseline returns what
// the API returns: the same page, the same totalCount, the same marked ids.
func TestInboxBaselineMatchesHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			const subscribers, messages = 50, 3000
			in := openInbox(t, kind, "", subscribers, messages)
			require.Equal(t, messages/hotEvery, in.msgs.HotCount(messages))
			ctx := context.Background()
			cases := []struct{ k, page int }{{seed.HotSubscriber, 0}, {seed.HotSubscriber, 2}, {seed.HotSubscriber, 9}, {1, 0}, {7, 3}, {49, 1}}
			for _, c := range cases {
				p, _, err := in.feedHTTP(seed.SubscriberID(c.k), c.page, 10)
				require.NoError(t, err)
				ids, total, err := in.feedSQL(ctx, in.gen.Subscriber(c.k).ID, c.page, 10)
				require.NoError(t, err)
				var got []string
				for _, d := range p.Data {
					got = append(got, d.ID)
				}
				require.Equal(t, got, ids, "subscriber %d page %d", c.k, c.page)
				require.Equal(t, p.TotalCount, total, "subscriber %d page %d", c.k, c.page)
				require.Equal(t, in.countStar(t, in.gen.Subscriber(c.k).ID), total, "subscriber %d: counts kept by the bulk load", c.k)
				if c.page == 0 && c.k != seed.HotSubscriber {
					require.Greater(t, total, 10, "subscriber %d", c.k)
				}
				if len(ids) > 0 {
					marked, err := in.markSQL(ctx, in.gen.Subscriber(c.k).ID, ids, c.page%2 == 0)
					require.NoError(t, err)
					require.ElementsMatch(t, ids, marked)
					unseen := in.count(t, "SELECT count(*) FROM messages WHERE "+inboxWhere+" AND seen = false",
						in.gen.Subscriber(c.k).ID, in.scope.EnvironmentID)
					var out struct{ Count int }
					in.mustDo(t, "GET", "/v1/subscribers/"+seed.SubscriberID(c.k)+"/notifications/unseen", nil, 200, &out)
					require.Equal(t, unseen, out.Count, "subscriber %d: counts kept by the mark-as SQL", c.k)
				}
			}
			require.Equal(t, in.msgs.HotCount(messages), in.count(t, "SELECT count(*) FROM messages WHERE subscriber_id = $1",
				in.gen.Subscriber(seed.HotSubscriber).ID))
		})
	}
}
