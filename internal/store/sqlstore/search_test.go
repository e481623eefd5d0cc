package sqlstore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// searchPeople are the subscribers the filter tests search, by subscriberId.
// The values pair a string with one that a LIKE wildcard or a case-insensitive
// match would wrongly find.
var searchPeople = []struct {
	subscriberID        string
	email, phone        *string
	firstName, lastName *string
}{
	{"sub-1", ptr("alice@example.com"), ptr("+1 555 0100"), ptr("Ada"), ptr("Lovelace")},
	{"sub-2", ptr("Alice@Example.com"), ptr("+44 20 7946 0000"), ptr("ada"), ptr("byron")},
	{"sub-3", ptr("100%real@x.io"), ptr("555_0101"), ptr("Grace"), nil},
	{"sub-4", ptr("100xreal@x.io"), ptr("555X0101"), ptr("Gracey"), ptr("Hopper")},
	{"sub-5", ptr(`back\slash@x.io`), ptr(`555\0102`), nil, ptr("Turing")},
	{"sub-6", ptr("backslash@x.io"), ptr("5550102"), nil, nil},
	{"sub-7", nil, nil, nil, nil},
	{"sub-8", ptr("under_score@x.io"), nil, ptr("Edsger W."), ptr("Dijkstra")},
	{"sub-9", ptr("underXscore@x.io"), nil, ptr("Edsger"), ptr("W_Dijkstra")},
	{"sub-10", ptr(`a\%b@x.io`), ptr("+1%555"), ptr("50%"), ptr("off")},
	{"sub-11", ptr(`a\xb@x.io`), ptr("+1x555"), ptr("50x"), ptr("off")},
}

func TestSubscriberSearchFilters(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		var subs []store.Subscriber
		for i, p := range searchPeople {
			at := base.Add(time.Duration(i) * time.Second)
			subs = append(subs, store.Subscriber{ID: id.NewAt(at), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID,
				SubscriberID: p.subscriberID, Email: p.email, Phone: p.phone, FirstName: p.firstName, LastName: p.lastName,
				CreatedAt: at, UpdatedAt: at})
		}
		// Decoys: a deleted subscriber and one in environment B match everything.
		subs = append(subs, store.Subscriber{ID: id.New(), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, SubscriberID: "deleted",
			Email: ptr("alice@example.com"), Phone: ptr("+1 555 0100"), FirstName: ptr("Ada"), LastName: ptr("Lovelace"), CreatedAt: base, UpdatedAt: base},
			store.Subscriber{ID: id.New(), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvB.ID, SubscriberID: "sub-1",
				Email: ptr("alice@example.com"), Phone: ptr("+1 555 0100"), FirstName: ptr("Ada"), LastName: ptr("Lovelace"), CreatedAt: base, UpdatedAt: base})
		require.NoError(t, db.SubscriberBulkLoad(ctx, subs))
		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "deleted",
			Now: tn.Clock.Now()}))

		for _, tc := range []struct {
			name                          string
			subscriberID, email, phone, n *string
			want                          []string
		}{
			{name: "no filter", want: []string{"sub-1", "sub-2", "sub-3", "sub-4", "sub-5", "sub-6", "sub-7", "sub-8", "sub-9", "sub-10", "sub-11"}},
			{name: "subscriberId is exact", subscriberID: ptr("sub-1"), want: []string{"sub-1"}},
			{name: "subscriberId is not a substring", subscriberID: ptr("sub"), want: nil},
			{name: "subscriberId is case-sensitive", subscriberID: ptr("SUB-1"), want: nil},
			{name: "email substring", email: ptr("lice@"), want: []string{"sub-1", "sub-2"}},
			{name: "email is case-sensitive", email: ptr("alice"), want: []string{"sub-1"}},
			{name: "email is case-sensitive upper", email: ptr("Example"), want: []string{"sub-2"}},
			{name: "email percent is literal", email: ptr("0%r"), want: []string{"sub-3"}},
			{name: "email underscore is literal", email: ptr("r_s"), want: []string{"sub-8"}},
			{name: "email backslash is literal", email: ptr(`k\s`), want: []string{"sub-5"}},
			{name: "email lone backslash", email: ptr(`\`), want: []string{"sub-5", "sub-10", "sub-11"}},
			{name: "email backslash then percent", email: ptr(`\%`), want: []string{"sub-10"}},
			{name: "email lone percent", email: ptr("%"), want: []string{"sub-3", "sub-10"}},
			{name: "email lone underscore", email: ptr("_"), want: []string{"sub-8"}},
			{name: "email full value", email: ptr("backslash@x.io"), want: []string{"sub-6"}},
			{name: "phone substring", phone: ptr("555"), want: []string{"sub-1", "sub-3", "sub-4", "sub-5", "sub-6", "sub-10", "sub-11"}},
			{name: "phone plus", phone: ptr("+44"), want: []string{"sub-2"}},
			{name: "phone underscore is literal", phone: ptr("5_0"), want: []string{"sub-3"}},
			{name: "phone backslash is literal", phone: ptr(`5\0`), want: []string{"sub-5"}},
			{name: "phone percent is literal", phone: ptr("1%5"), want: []string{"sub-10"}},
			{name: "phone case", phone: ptr("x"), want: []string{"sub-11"}},
			{name: "name first part", n: ptr("Ada"), want: []string{"sub-1"}},
			{name: "name is case-sensitive", n: ptr("ada"), want: []string{"sub-2"}},
			{name: "name across the space", n: ptr("a Lo"), want: []string{"sub-1"}},
			{name: "name full", n: ptr("Ada Lovelace"), want: []string{"sub-1"}},
			{name: "name with null last name", n: ptr("Grace "), want: []string{"sub-3"}},
			{name: "name prefix", n: ptr("Grace"), want: []string{"sub-3", "sub-4"}},
			{name: "name with null first name", n: ptr(" Turing"), want: []string{"sub-5"}},
			{name: "name last part", n: ptr("Dijkstra"), want: []string{"sub-8", "sub-9"}},
			{name: "name underscore is literal", n: ptr("W_D"), want: []string{"sub-9"}},
			{name: "name with a space inside first name", n: ptr("W. D"), want: []string{"sub-8"}},
			{name: "name percent is literal", n: ptr("0% o"), want: []string{"sub-10"}},
			{name: "name matches nothing", n: ptr("Nobody"), want: nil},
			{name: "email and name", email: ptr("@x.io"), n: ptr("Grace"), want: []string{"sub-3", "sub-4"}},
			{name: "email and phone", email: ptr("x.io"), phone: ptr("X"), want: []string{"sub-4"}},
			{name: "email and subscriberId", email: ptr("alice"), subscriberID: ptr("sub-1"), want: []string{"sub-1"}},
			{name: "disjoint filters", email: ptr("alice"), phone: ptr("+44"), want: nil},
			{name: "all four", subscriberID: ptr("sub-8"), email: ptr("_"), n: ptr("Edsger"), phone: nil, want: []string{"sub-8"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				res, err := db.SubscriberSearch(t.Context(), &store.SubscriberSearchParams{Scope: tn.A,
					SubscriberID: tc.subscriberID, Email: tc.email, Phone: tc.phone, Name: tc.n, OrderBy: store.OrderByID, Limit: 100})
				require.NoError(t, err)
				var got []string
				for _, s := range res.Subscribers {
					require.Equal(t, tn.EnvA.ID, s.EnvironmentID)
					got = append(got, s.SubscriberID)
				}
				require.ElementsMatch(t, tc.want, got)
				require.Equal(t, len(tc.want), res.TotalCount)
				require.False(t, res.TotalCountCapped)
				require.Nil(t, res.Next)
				require.Nil(t, res.Previous)

				// With a page of one the count still covers every match.
				res, err = db.SubscriberSearch(t.Context(), &store.SubscriberSearchParams{Scope: tn.A,
					SubscriberID: tc.subscriberID, Email: tc.email, Phone: tc.phone, Name: tc.n, OrderBy: store.OrderByID, Limit: 1})
				require.NoError(t, err)
				require.Equal(t, len(tc.want), res.TotalCount)
				require.Equal(t, len(tc.want) > 1, res.Next != nil)
			})
		}
	})
}

// sortKey is the value a subscriber sorts by under order (0 for _id).
func sortKey(order store.SubscriberOrder, s store.Subscriber) int64 {
	switch order {
	case store.OrderByCreatedAt:
		return s.CreatedAt.UnixMilli()
	case store.OrderByUpdatedAt:
		return s.UpdatedAt.UnixMilli()
	}
	return 0
}

func cursorAt(order store.SubscriberOrder, s store.Subscriber) *store.Cursor {
	return &store.Cursor{Order: order, Key: sortKey(order, s), ID: s.ID}
}

// sorted returns subs in the order a search must return them.
func sorted(subs []store.Subscriber, order store.SubscriberOrder, desc bool) []string {
	subs = slices.Clone(subs)
	slices.SortFunc(subs, func(a, b store.Subscriber) int {
		c := cmpInt(sortKey(order, a), sortKey(order, b))
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if desc {
			c = -c
		}
		return c
	})
	return ids(subs)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func ids(subs []store.Subscriber) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.ID
	}
	return out
}

func TestSubscriberSearchOrderAndPaging(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		// Few distinct times, so that most rows tie on the sort key and _id
		// decides; ids are not in time order, so a wrong tie-break shows.
		const n = 23
		var subs []store.Subscriber
		for i := range n {
			subs = append(subs, store.Subscriber{ID: id.NewAt(base.Add(time.Duration((i*7)%n) * time.Second)),
				OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, SubscriberID: fmt.Sprintf("p-%02d", i),
				CreatedAt: base.Add(time.Duration(i%3) * time.Hour), UpdatedAt: base.Add(time.Duration(i%4) * time.Minute)})
		}
		require.NoError(t, db.SubscriberBulkLoad(t.Context(), subs))

		for _, order := range []store.SubscriberOrder{store.OrderByID, store.OrderByCreatedAt, store.OrderByUpdatedAt} {
			for _, desc := range []bool{false, true} {
				want := sorted(subs, order, desc)
				for _, limit := range []int{1, 4, n, 100} {
					t.Run(fmt.Sprintf("%s/desc=%v/limit=%d", order, desc, limit), func(t *testing.T) {
						t.Parallel()
						search := func(after, before *store.Cursor, include bool) store.SubscriberSearchResult {
							t.Helper()
							res, err := db.SubscriberSearch(t.Context(), &store.SubscriberSearchParams{Scope: tn.A, OrderBy: order,
								Descending: desc, After: after, Before: before, IncludeCursor: include, Limit: limit})
							require.NoError(t, err)
							require.Equal(t, n, res.TotalCount, "the count ignores the cursor")
							require.False(t, res.TotalCountCapped)
							require.LessOrEqual(t, len(res.Subscribers), limit)
							return res
						}

						// Forwards with after: every row once, in order.
						var got []string
						var pages []store.SubscriberSearchResult
						res := search(nil, nil, false)
						require.Nil(t, res.Previous, "the first page has no previous page")
						for {
							pages = append(pages, res)
							got = append(got, ids(res.Subscribers)...)
							if res.Next == nil {
								break
							}
							require.Len(t, res.Subscribers, limit, "only the last page is short")
							require.Less(t, len(pages), n+1, "paging does not end")
							res = search(res.Next, nil, false)
							require.NotNil(t, res.Previous, "a later page has a previous page")
						}
						require.Equal(t, want, got)

						// The previous cursor of a page leads back to the page before it.
						for i := 1; i < len(pages); i++ {
							back := search(nil, pages[i].Previous, false)
							require.Equal(t, ids(pages[i-1].Subscribers), ids(back.Subscribers))
							require.NotNil(t, back.Next)
							require.Equal(t, i > 1, back.Previous != nil, "previous is nil only at the start")
						}

						// Backwards with before, from the end: every row once, in order.
						last := subs[slices.IndexFunc(subs, func(s store.Subscriber) bool { return s.ID == want[n-1] })]
						res = search(nil, cursorAt(order, last), true)
						got = ids(res.Subscribers)
						require.Equal(t, want[n-1], got[len(got)-1], "includeCursor includes the cursor row")
						for res.Previous != nil {
							res = search(nil, res.Previous, false)
							require.NotNil(t, res.Next)
							got = append(ids(res.Subscribers), got...)
							require.LessOrEqual(t, len(got), n, "paging does not end")
						}
						require.Equal(t, want, got)

						// includeCursor with after starts at the cursor row.
						mid := subs[slices.IndexFunc(subs, func(s store.Subscriber) bool { return s.ID == want[n/2] })]
						res = search(cursorAt(order, mid), nil, true)
						require.Equal(t, want[n/2:min(n, n/2+limit)], ids(res.Subscribers))
						res = search(cursorAt(order, mid), nil, false)
						require.Equal(t, want[n/2+1:min(n, n/2+1+limit)], ids(res.Subscribers))
						res = search(nil, cursorAt(order, mid), false)
						require.Equal(t, want[max(0, n/2-limit):n/2], ids(res.Subscribers))
						require.Equal(t, n/2 > limit, res.Previous != nil)

						// After the last row there is nothing.
						res = search(cursorAt(order, last), nil, false)
						require.Empty(t, res.Subscribers)
						require.Nil(t, res.Next)
					})
				}
			}
		}
	})
}

func TestSubscriberSearchCountCap(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		subs := make([]store.Subscriber, store.TotalCountCap+1)
		for i := range subs {
			subs[i] = store.Subscriber{ID: id.New(), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID,
				SubscriberID: fmt.Sprintf("c%d", i), Email: ptr(fmt.Sprintf("c%d@example.com", i)), CreatedAt: base, UpdatedAt: base}
		}
		require.NoError(t, db.SubscriberBulkLoad(ctx, subs))

		res, err := db.SubscriberSearch(ctx, &store.SubscriberSearchParams{Scope: tn.A, OrderBy: store.OrderByID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, res.Subscribers, 10)
		require.Equal(t, store.TotalCountCap, res.TotalCount)
		require.True(t, res.TotalCountCapped)

		// A filter counts its matches only: c1, c10..c19, c100..c199, …
		res, err = db.SubscriberSearch(ctx, &store.SubscriberSearchParams{Scope: tn.A, Email: ptr("c1"), OrderBy: store.OrderByID, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 1+10+100+1000+10000, res.TotalCount)
		require.False(t, res.TotalCountCapped)

		// Exactly at the cap is not capped.
		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "c0", Now: tn.Clock.Now()}))
		res, err = db.SubscriberSearch(ctx, &store.SubscriberSearchParams{Scope: tn.A, OrderBy: store.OrderByCreatedAt, Descending: true, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, store.TotalCountCap, res.TotalCount)
		require.False(t, res.TotalCountCapped)
	})
}
