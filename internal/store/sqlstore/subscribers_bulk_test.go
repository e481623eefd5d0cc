package sqlstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func item(sid string, fields ...func(*store.SubscriberUpsertParams)) store.SubscriberUpsertParams {
	p := store.SubscriberUpsertParams{SubscriberID: sid}
	for _, f := range fields {
		f(&p)
	}
	return p
}

func firstName(v string) func(*store.SubscriberUpsertParams) {
	return func(p *store.SubscriberUpsertParams) { p.FirstName = set(v) }
}

func email(f store.Field) func(*store.SubscriberUpsertParams) {
	return func(p *store.SubscriberUpsertParams) { p.Email = f }
}

func data(v string) func(*store.SubscriberUpsertParams) {
	return func(p *store.SubscriberUpsertParams) { p.DataSet, p.Data = true, store.JSON(v) }
}

// bulk upserts items in an environment of tn at tn's clock.
func bulk(t *testing.T, db *sqlstore.DB, tn *tenant, scope store.Scope, items ...store.SubscriberUpsertParams) []bool {
	t.Helper()
	created, err := db.SubscriberBulkUpsert(t.Context(), &store.SubscriberBulkUpsertParams{Scope: scope, Items: items, Now: tn.Clock.Now()})
	require.NoError(t, err)
	require.Len(t, created, len(items))
	return created
}

func TestSubscriberBulkUpsert(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		ada, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", FirstName: set("Ada"),
			Email: set("ada@example.com"), Phone: set("+1555"), Now: tn.Clock.Now()})
		gone, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "gone", Now: tn.Clock.Now()})
		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "gone", Now: tn.Clock.Now()}))
		at := tn.Clock.Advance(time.Minute)

		created := bulk(t, db, tn, tn.A,
			item("ada", email(null)),                      // only email changes: cleared
			item("new", firstName("Nu"), data(`{"p":1}`)), // created
			item("new", email(set("nu@example.com"))),     // the same subscriber, changed again
			item("gone", firstName("Back")),               // a deleted subscriberId is created anew
			item("plain"),                                 // no attributes at all
		)
		require.Equal(t, []bool{false, true, false, true, true}, created)

		got, err := db.SubscriberGet(ctx, tn.A, "ada")
		require.NoError(t, err)
		require.Equal(t, ada.ID, got.ID)
		require.Equal(t, "Ada", *got.FirstName, "an attribute not sent stays")
		require.Equal(t, "+1555", *got.Phone)
		require.Nil(t, got.Email, "null clears")
		require.Equal(t, ada.Version+1, got.Version)
		require.True(t, got.UpdatedAt.Equal(at))
		require.True(t, got.CreatedAt.Equal(ada.CreatedAt))

		nu, err := db.SubscriberGet(ctx, tn.A, "new")
		require.NoError(t, err)
		require.Equal(t, "Nu", *nu.FirstName, "items of one subscriberId apply in order")
		require.Equal(t, "nu@example.com", *nu.Email)
		require.JSONEq(t, `{"p":1}`, string(nu.Data))
		require.Zero(t, nu.Version)
		require.True(t, nu.CreatedAt.Equal(at))
		require.Len(t, nu.ID, 24)

		back, err := db.SubscriberGet(ctx, tn.A, "gone")
		require.NoError(t, err)
		require.NotEqual(t, gone.ID, back.ID)
		require.Equal(t, "Back", *back.FirstName)

		plain, err := db.SubscriberGet(ctx, tn.A, "plain")
		require.NoError(t, err)
		require.Nil(t, plain.FirstName)
		require.Nil(t, plain.Data)
		require.Empty(t, plain.Channels)

		// Environments are apart: the same ids in B are new subscribers there.
		require.Equal(t, []bool{true, true}, bulk(t, db, tn, tn.B, item("ada", firstName("Other")), item("new")))
		got, err = db.SubscriberGet(ctx, tn.A, "ada")
		require.NoError(t, err)
		require.Equal(t, "Ada", *got.FirstName)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM subscribers WHERE environment_id = $1 AND subscriber_id = 'ada'", tn.A.EnvironmentID))
	})
}

// TestSubscriberBulkUpsertMany: 500 items of varied shapes, more than one
// statement's worth, created and then updated.
func TestSubscriberBulkUpsertMany(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		items := make([]store.SubscriberUpsertParams, 500)
		for i := range items {
			items[i] = item(fmt.Sprintf("user-%03d", i), firstName(fmt.Sprint("F", i)))
			if i%3 == 0 {
				items[i].Email = set(fmt.Sprintf("u%d@example.com", i))
			}
		}
		for _, c := range bulk(t, db, tn, tn.A, items...) {
			require.True(t, c)
		}
		for i := range items {
			items[i].FirstName = set(fmt.Sprint("G", i))
		}
		for _, c := range bulk(t, db, tn, tn.A, items...) {
			require.False(t, c)
		}
		require.Equal(t, 500, count(t, db, "SELECT count(*) FROM subscribers WHERE environment_id = $1", tn.A.EnvironmentID))
		require.Equal(t, 500, count(t, db, "SELECT count(*) FROM subscribers WHERE version = 1 AND first_name LIKE 'G%'"))
		require.Equal(t, 167, count(t, db, "SELECT count(*) FROM subscribers WHERE email IS NOT NULL"))
	})
}

// TestSubscriberBulkUpsertConcurrent: bulk upserts with overlapping
// subscriberIds, in different orders, beside single upserts, all at once:
// no error, one subscriber per subscriberId, each created exactly once.
func TestSubscriberBulkUpsertConcurrent(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		const calls, ids = 6, 120
		batches := make([][]store.SubscriberUpsertParams, calls)
		for c := range batches {
			r := rand.New(rand.NewPCG(uint64(c), 7))
			for _, i := range r.Perm(ids)[:80] {
				it := item(fmt.Sprint("c-", i), firstName(fmt.Sprint("call", c)))
				if (i+c)%2 == 0 { // items of different shapes go in different statements
					it.Email = set(fmt.Sprintf("c%d@example.com", i))
				}
				batches[c] = append(batches[c], it)
			}
		}
		results := make([][]bool, calls)
		errs := parallel(calls+2, func(c int) error {
			if c >= calls { // single upserts beside them
				for i := range ids {
					if _, _, err := db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: tn.A,
						SubscriberID: fmt.Sprint("c-", i), LastName: set("single"), Now: tn.Clock.Now()}); err != nil {
						return err
					}
				}
				return nil
			}
			var err error
			results[c], err = db.SubscriberBulkUpsert(ctx, &store.SubscriberBulkUpsertParams{Scope: tn.A, Items: batches[c],
				Now: tn.Clock.Now()})
			return err
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, ids, count(t, db, "SELECT count(*) FROM subscribers WHERE environment_id = $1", tn.A.EnvironmentID))
		require.Zero(t, count(t, db, "SELECT count(*) FROM (SELECT subscriber_id FROM subscribers GROUP BY subscriber_id HAVING count(*) > 1) d"))
		createdBy := map[string]int{}
		for c, res := range results {
			for i, made := range res {
				if made {
					createdBy[batches[c][i].SubscriberID]++
				}
			}
		}
		for sid, n := range createdBy {
			require.Equal(t, 1, n, "%s created by one call", sid)
		}
		require.Equal(t, ids, count(t, db, "SELECT count(*) FROM subscribers WHERE last_name = 'single'"), "no write was lost")
	})
}

func TestSubscriberSetOnline(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		ada, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()})
		require.Nil(t, ada.IsOnline)

		at := tn.Clock.Advance(time.Minute)
		s, err := db.SubscriberSetOnline(ctx, &store.SubscriberOnlineParams{Scope: tn.A, SubscriberID: "ada", Online: true,
			Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.True(t, *s.IsOnline)
		require.Nil(t, s.LastOnlineAt, "never offline yet")
		require.Equal(t, ada.Version+1, s.Version)
		require.True(t, s.UpdatedAt.Equal(at))

		off := tn.Clock.Advance(time.Minute)
		s, err = db.SubscriberSetOnline(ctx, &store.SubscriberOnlineParams{Scope: tn.A, SubscriberID: "ada", Online: false,
			Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.False(t, *s.IsOnline)
		require.True(t, s.LastOnlineAt.Equal(off), "going offline records the time")

		tn.Clock.Advance(time.Minute)
		s, err = db.SubscriberSetOnline(ctx, &store.SubscriberOnlineParams{Scope: tn.A, SubscriberID: "ada", Online: true,
			Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.True(t, *s.IsOnline)
		require.True(t, s.LastOnlineAt.Equal(off), "going online keeps the last offline time")
		got, err := db.SubscriberGet(ctx, tn.A, "ada")
		require.NoError(t, err)
		require.Equal(t, s, got)

		for _, c := range []struct {
			scope store.Scope
			sid   string
		}{{tn.A, "nobody"}, {tn.B, "ada"}} {
			_, err = db.SubscriberSetOnline(ctx, &store.SubscriberOnlineParams{Scope: c.scope, SubscriberID: c.sid, Online: true,
				Now: tn.Clock.Now()})
			require.ErrorIs(t, err, store.ErrNotFound)
		}
	})
}

// BenchmarkSubscriberBulkUpsert: one op is a bulk of 500 realistic
// subscribers, half of them new and half updates of the previous op's.
func BenchmarkSubscriberBulkUpsert(b *testing.B) {
	for _, kind := range testdb.Kinds {
		b.Run(kind, func(b *testing.B) {
			db := testdb.Open(b, kind)
			scope := store.Scope{OrganizationID: "o", EnvironmentID: "e"}
			exec := func(q string, a ...any) {
				_, err := db.Writer().ExecContext(b.Context(), q, a...)
				require.NoError(b, err)
			}
			exec("INSERT INTO organizations (id, name, created_at) VALUES ('o', 'O', 0)")
			exec("INSERT INTO environments (id, organization_id, name, created_at) VALUES ('e', 'o', 'development', 0)")
			items := make([]store.SubscriberUpsertParams, 500)
			b.ResetTimer()
			for n := range b.N {
				for i := range items {
					k := n*250 + i
					items[i] = store.SubscriberUpsertParams{SubscriberID: fmt.Sprint("bench-", k), FirstName: set(fmt.Sprint("F", n)),
						LastName: set("L"), Email: set(fmt.Sprintf("u%d@example.com", k)), Locale: set("en-GB"), Timezone: set("Europe/London"),
						DataSet: true, Data: store.JSON(`{"plan":"pro"}`)}
				}
				if _, err := db.SubscriberBulkUpsert(b.Context(), &store.SubscriberBulkUpsertParams{Scope: scope, Items: items,
					Now: time.Now()}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(items))/b.Elapsed().Seconds(), "subscribers/s")
		})
	}
}
