package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// oracleRow is a message as the oracle of the counts sees it.
type oracleRow struct {
	id                            string
	read, seen, archived, snoozed bool
	severity                      string
	tags                          []string
	data                          map[string]any
	createdAt                     int64
}

// oracle reads a subscriber's in-app messages with plain SQL.
func oracle(t *testing.T, db *sqlstore.DB, subscriberID string) []oracleRow {
	t.Helper()
	rows, err := db.Reader().Query("SELECT id, read, seen, archived, snoozed_until IS NOT NULL, severity, tags, data, created_at"+
		" FROM messages WHERE subscriber_id = $1 AND channel = 'in_app' AND deleted = false ORDER BY created_at DESC, id DESC", subscriberID)
	require.NoError(t, err)
	defer rows.Close()
	var out []oracleRow
	for rows.Next() {
		var r oracleRow
		var tags, data sql.NullString
		require.NoError(t, rows.Scan(&r.id, &r.read, &r.seen, &r.archived, &r.snoozed, &r.severity, &tags, &data, &r.createdAt))
		if tags.Valid {
			require.NoError(t, json.Unmarshal([]byte(tags.String), &r.tags))
		}
		if data.Valid {
			require.NoError(t, json.Unmarshal([]byte(data.String), &r.data))
		}
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// matches evaluates a filter on an oracle row, independently of the store.
func (r oracleRow) matches(f *store.InboxFilter) bool {
	for _, c := range []struct {
		want *bool
		have bool
	}{{f.Read, r.read}, {f.Seen, r.seen}, {f.Archived, r.archived}, {f.Snoozed, r.snoozed}} {
		if c.want != nil && *c.want != c.have {
			return false
		}
	}
	if len(f.Severity) > 0 && !slices.Contains(f.Severity, r.severity) {
		return false
	}
	for _, group := range f.Tags {
		if !slices.ContainsFunc(group, func(tag string) bool { return slices.Contains(r.tags, tag) }) {
			return false
		}
	}
	for _, c := range f.Data {
		var want any
		_ = json.Unmarshal(c.Value, &want)
		if r.data == nil || fmt.Sprint(r.data[c.Path[0]]) != fmt.Sprint(want) {
			return false
		}
	}
	return true
}

func countOracle(rows []oracleRow, f *store.InboxFilter) int {
	n := 0
	for _, r := range rows {
		if r.matches(f) {
			n++
		}
	}
	return n
}

// stateFilters are every combination of the state conditions: read, seen,
// archived and snoozed each any/false/true, severity any/high/none+low.
func stateFilters() []store.InboxFilter {
	f, tr := false, true
	bools := []*bool{nil, &f, &tr}
	var out []store.InboxFilter
	for _, read := range bools {
		for _, seen := range bools {
			for _, archived := range bools {
				for _, snoozed := range bools {
					for _, sev := range [][]string{nil, {"high"}, {"none", "low"}} {
						out = append(out, store.InboxFilter{Read: read, Seen: seen, Archived: archived, Snoozed: snoozed, Severity: sev})
					}
				}
			}
		}
	}
	return out
}

// contentFilters have tags or data, counted by reading messages.
func contentFilters() []store.InboxFilter {
	f := false
	return []store.InboxFilter{
		{Tags: [][]string{{"a"}}},
		{Tags: [][]string{{"a", "b"}}, Read: &f},
		{Tags: [][]string{{"a"}, {"c"}}},
		{Data: []store.PayloadCondition{{Path: []string{"k"}, Value: store.JSON("1")}}},
		{Data: []store.PayloadCondition{{Path: []string{"k"}, Value: store.JSON("2")}}, Archived: &f, Snoozed: &f},
	}
}

// TestInboxStateCountsStayExact: after every inbox action — one message or
// many, by ids or filters, v1 and v2, action completion, snoozes ending
// through the pass and through reads — some concurrent, the counts of every
// state filter and of content filters equal an independent count of the
// messages, the v1 feed and unseen count agree with the inbox proper, and a
// rebuild agrees with the maintained counts.
func TestInboxStateCountsStayExact(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		f := newInboxFixture(t, db)
		ctx := context.Background()
		subs := []string{id.New(), id.New()}
		var all []string
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range 90 {
			m := f.message(t, subs[i%2], time.Duration(i)*time.Millisecond, func(m *store.Message) {
				m.Severity = store.Severities[rng.IntN(4)]
				m.Tags = [][]string{{}, {"a"}, {"b"}, {"a", "c"}}[rng.IntN(4)]
				m.Data = store.JSON(fmt.Sprintf(`{"k":%d}`, rng.IntN(3)))
			})
			all = append(all, m.ID)
		}
		actions := []string{store.InboxRead, store.InboxUnread, store.InboxSeen, store.InboxArchive, store.InboxUnarchive,
			store.InboxSnooze, store.InboxUnsnooze}
		marks := []string{store.MarkRead, store.MarkUnread, store.MarkSeen, store.MarkUnseen}
		work := func(seed uint64, steps int) {
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(seed, uint64(w)))
					for range steps {
						sub, msg := subs[r.IntN(2)], all[r.IntN(len(all))]
						now := f.tn.Clock.Now()
						until := now.Add(time.Duration(1+r.IntN(10)) * time.Minute)
						var err error
						switch k := r.IntN(10); {
						case k < 5:
							_, err = db.InboxChangeOne(ctx, &store.InboxChangeParams{Scope: f.scope, SubscriberID: sub,
								Action: actions[r.IntN(len(actions))], ID: msg, SnoozeUntil: until, Now: now})
						case k < 7:
							filter := contentFilters()[r.IntN(5)]
							_, err = db.InboxChangeMany(ctx, &store.InboxChangeParams{Scope: f.scope, SubscriberID: sub,
								Action: []string{store.InboxRead, store.InboxArchive, store.InboxSeen}[r.IntN(3)], Filter: filter, Now: now})
						case k < 8:
							_, err = db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: f.scope, SubscriberID: sub,
								IDs: []string{msg, all[r.IntN(len(all))]}, MarkAs: marks[r.IntN(4)], Now: now})
						case k < 9:
							_, err = db.InboxCompleteAction(ctx, &store.InboxActionParams{Scope: f.scope, SubscriberID: sub, MessageID: msg, Button: "primary", Done: r.IntN(2) == 0,
								Now: now})
						default:
							_, err = db.InboxCount(ctx, &store.InboxCountParams{Scope: f.scope, SubscriberID: sub,
								Filters: []store.InboxFilter{{}}, Now: now})
						}
						if err != nil && err != store.ErrNotFound {
							require.NoError(t, err)
						}
					}
				}()
			}
			wg.Wait()
		}
		work(1, 25)
		f.tn.Clock.Advance(4 * time.Minute)
		_, err := db.InboxUnsnoozeDue(ctx, 3, f.tn.Clock.Now())
		require.NoError(t, err)
		work(2, 25)
		_, err = db.MessageMarkAll(ctx, &store.MessageMarkAllParams{Scope: f.scope, SubscriberID: subs[0], MarkAs: store.MarkSeen,
			Now: f.tn.Clock.Now()})
		require.NoError(t, err)
		for range 4 {
			if err := db.MessageDelete(ctx, &store.MessageDeleteParams{Scope: f.scope, MessageID: all[rng.IntN(len(all))],
				Now: f.tn.Clock.Now()}); err != store.ErrNotFound {
				require.NoError(t, err)
			}
		}
		_, err = db.InboxChangeMany(ctx, &store.InboxChangeParams{Scope: f.scope, SubscriberID: subs[1], Action: store.InboxDelete,
			Filter: store.InboxFilter{Tags: [][]string{{"b"}}}, Now: f.tn.Clock.Now()})
		require.NoError(t, err)
		// Some snoozes end now, through the reads below.
		f.tn.Clock.Advance(5 * time.Minute)

		filters := append(stateFilters(), contentFilters()...)
		for _, sub := range subs {
			got, err := db.InboxCount(ctx, &store.InboxCountParams{Scope: f.scope, SubscriberID: sub, Filters: filters,
				Now: f.tn.Clock.Now()})
			require.NoError(t, err)
			rows := oracle(t, db, sub)
			for i := range filters {
				require.Equal(t, countOracle(rows, &filters[i]), got[i], "subscriber %s filter %+v", sub, filters[i])
			}
			// The v1 feed and unseen count show the inbox proper.
			no := false
			for _, read := range []*bool{nil, &no} {
				page, err := db.MessageFeed(ctx, &store.FeedParams{Scope: f.scope, SubscriberID: sub, Read: read, Page: 1,
					Limit: 1, Now: f.tn.Clock.Now()})
				require.NoError(t, err)
				require.Equal(t, countOracle(rows, &store.InboxFilter{Read: read, Archived: &no, Snoozed: &no}), page.TotalCount)
			}
			unseen, err := db.MessageUnseenCount(ctx, &store.MessageUnseenCountParams{Scope: f.scope, SubscriberID: sub,
				Now: f.tn.Clock.Now()})
			require.NoError(t, err)
			require.Equal(t, countOracle(rows, &store.InboxFilter{Seen: &no, Archived: &no, Snoozed: &no}), unseen)
		}
		requireCountsRebuilt(t, db)
	})
}

// TestInboxList: the filters of the list, its cursor and offset, and its
// order, against the oracle.
func TestInboxList(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		f := newInboxFixture(t, db)
		ctx := context.Background()
		sub := id.New()
		rng := rand.New(rand.NewPCG(5, 6))
		for i := range 40 {
			m := f.message(t, sub, time.Duration(i/2)*time.Second, func(m *store.Message) { // pairs share a time
				m.Severity = store.Severities[i%4]
				m.Tags = [][]string{{"a"}, {"b"}, {"a", "c"}}[i%3]
				m.Data = store.JSON(fmt.Sprintf(`{"k":%d}`, i%2))
			})
			if k := rng.IntN(4); k > 0 {
				_, err := f.change(t, sub, m.ID, []string{"", store.InboxRead, store.InboxArchive, store.InboxSnooze}[k],
					f.tn.Clock.Now().Add(time.Hour))
				require.NoError(t, err)
			}
		}
		f.message(t, id.New(), 0, nil) // another subscriber's
		rows := oracle(t, db, sub)
		created := func(i int) *time.Time { at := time.UnixMilli(rows[i].createdAt); return &at }
		for _, filter := range append(contentFilters(), store.InboxFilter{},
			store.InboxFilter{Severity: []string{"high", "low"}, Read: new(bool)},
			store.InboxFilter{CreatedGTE: created(30), CreatedLTE: created(5)}) {
			var want []string
			for _, r := range rows {
				if r.matches(&filter) && (filter.CreatedGTE == nil || r.createdAt >= filter.CreatedGTE.UnixMilli()) &&
					(filter.CreatedLTE == nil || r.createdAt <= filter.CreatedLTE.UnixMilli()) {
					want = append(want, r.id)
				}
			}
			// Pages of 3 through the cursor, then by offset.
			var got []string
			after := ""
			for {
				page, err := db.InboxList(ctx, &store.InboxListParams{Scope: f.scope, SubscriberID: sub, InboxFilter: filter,
					After: after, Limit: 3, Now: f.tn.Clock.Now()})
				require.NoError(t, err)
				for _, m := range page.Messages {
					got = append(got, m.ID)
				}
				if !page.HasMore {
					break
				}
				after = page.Messages[len(page.Messages)-1].ID
			}
			require.Equal(t, want, got, "filter %+v", filter)
			if len(want) > 4 {
				page, err := db.InboxList(ctx, &store.InboxListParams{Scope: f.scope, SubscriberID: sub, InboxFilter: filter,
					Offset: 2, Limit: 2, Now: f.tn.Clock.Now()})
				require.NoError(t, err)
				require.Equal(t, want[2:4], []string{page.Messages[0].ID, page.Messages[1].ID})
			}
		}
		_, err := db.InboxList(ctx, &store.InboxListParams{Scope: f.scope, SubscriberID: sub, After: id.New(), Limit: 3,
			Now: f.tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrBadCursor)
	})
}
