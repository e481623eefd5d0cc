package sqlstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestSubscriberUpsertCreateThenUpdate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)

		s, created := upsert(t, db, store.SubscriberUpsertParams{
			Scope: tn.A, SubscriberID: "ada",
			FirstName: set("Ada"), LastName: set("Lovelace"), Email: set("ada@example.com"), Phone: set("+44 20 7946 0000"),
			Avatar: set("https://example.com/a.png"), Locale: set("en-GB"), Timezone: set("Europe/London"),
			DataSet: true, Data: store.JSON(`{"plan":"pro","seats":3}`),
			Now: tn.Clock.Now(),
		})
		require.True(t, created)
		require.True(t, id.Valid(s.ID), s.ID)
		require.NotEqual(t, "ada", s.ID)
		require.Equal(t, store.Subscriber{
			ID: s.ID, OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, SubscriberID: "ada",
			FirstName: ptr("Ada"), LastName: ptr("Lovelace"), Email: ptr("ada@example.com"), Phone: ptr("+44 20 7946 0000"),
			Avatar: ptr("https://example.com/a.png"), Locale: ptr("en-GB"), Timezone: ptr("Europe/London"),
			Data: store.JSON(`{"plan":"pro","seats":3}`), Channels: []store.ChannelSettings{},
			Version: 0, CreatedAt: base, UpdatedAt: base,
		}, normalizeJSON(t, s))
		got, err := db.SubscriberGet(ctx, tn.A, "ada")
		require.NoError(t, err)
		require.Equal(t, normalizeJSON(t, s), normalizeJSON(t, got))

		// An update: omitted fields stay, null clears, data stays when not sent.
		later := tn.Clock.Advance(time.Minute)
		u, created := upsert(t, db, store.SubscriberUpsertParams{
			Scope: tn.A, SubscriberID: "ada", FirstName: set("Augusta Ada"), Phone: null,
			Now: tn.Clock.Now(),
		})
		require.False(t, created)
		require.Equal(t, s.ID, u.ID)
		require.Equal(t, int64(1), u.Version)
		require.Equal(t, ptr("Augusta Ada"), u.FirstName)
		require.Nil(t, u.Phone, "explicit null clears")
		require.Equal(t, ptr("Lovelace"), u.LastName, "omitted fields are left as they are")
		require.Equal(t, ptr("ada@example.com"), u.Email)
		require.Equal(t, ptr("Europe/London"), u.Timezone)
		require.JSONEq(t, `{"plan":"pro","seats":3}`, string(u.Data), "data is kept when not sent")
		require.Equal(t, base, u.CreatedAt)
		require.Equal(t, later, u.UpdatedAt)

		// data is replaced as a whole when sent, and cleared by null.
		u, _ = upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", DataSet: true,
			Data: store.JSON(`{"seats":4}`), Now: tn.Clock.Now()})
		require.JSONEq(t, `{"seats":4}`, string(u.Data))
		require.Equal(t, int64(2), u.Version)
		u, _ = upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", DataSet: true, Now: tn.Clock.Now()})
		require.Nil(t, u.Data)
		require.Equal(t, int64(3), u.Version)

		// An upsert that sends nothing still counts as an update.
		u, created = upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()})
		require.False(t, created)
		require.Equal(t, int64(4), u.Version)
		require.Equal(t, ptr("Augusta Ada"), u.FirstName)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM subscribers"))
	})
}

// normalizeJSON compacts Data so that stores returning equivalent JSON with
// different spacing compare equal.
func normalizeJSON(t *testing.T, s store.Subscriber) store.Subscriber {
	t.Helper()
	if s.Data != nil {
		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, s.Data))
		s.Data = buf.Bytes()
	}
	return s
}

func TestSubscriberUpsertModes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		orig, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u1", Email: set("u1@example.com"),
			Now: tn.Clock.Now()})

		for _, tc := range []struct {
			name    string
			p       store.SubscriberUpsertParams
			wantErr error
			created bool
		}{
			{name: "fail if exists on an existing subscriber", p: store.SubscriberUpsertParams{
				Scope: tn.A, SubscriberID: "u1", Email: set("changed@example.com"), FailIfExists: true,
				Now: tn.Clock.Now(),
			}, wantErr: store.ErrConflict},
			{name: "update only on an absent subscriber", p: store.SubscriberUpsertParams{
				Scope: tn.A, SubscriberID: "absent", Email: set("x@example.com"), UpdateOnly: true,
				Now: tn.Clock.Now(),
			}, wantErr: store.ErrNotFound},
			{name: "fail if exists on an absent subscriber creates", p: store.SubscriberUpsertParams{
				Scope: tn.A, SubscriberID: "u2", Email: set("u2@example.com"), FailIfExists: true,
				Now: tn.Clock.Now(),
			}, created: true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := count(t, db, "SELECT count(*) FROM subscribers")
				s, created, err := db.SubscriberUpsert(ctx, &tc.p)
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
					require.Equal(t, before, count(t, db, "SELECT count(*) FROM subscribers"), "nothing written")
					got, err := db.SubscriberGet(ctx, tn.A, "u1")
					require.NoError(t, err)
					require.Equal(t, orig, got, "nothing changed")
					return
				}
				require.NoError(t, err)
				require.Equal(t, tc.created, created)
				require.Equal(t, tc.p.SubscriberID, s.SubscriberID)
			})
		}

		u, created, err := db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u1",
			Locale: set("fr"), UpdateOnly: true, Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, ptr("fr"), u.Locale)
		require.Equal(t, ptr("u1@example.com"), u.Email)
		require.Equal(t, int64(1), u.Version)
	})
}

func TestSubscriberDeleteThenRecreate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		first, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u1", FirstName: set("Old"),
			DataSet: true, Data: store.JSON(`{"a":1}`), Now: tn.Clock.Now()})

		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "u1", Now: tn.Clock.Now()}))
		require.ErrorIs(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "u1",
			Now: tn.Clock.Now()}), store.ErrNotFound, "already deleted")
		_, err := db.SubscriberGet(ctx, tn.A, "u1")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u1", UpdateOnly: true,
			Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound, "a deleted subscriber is not updated")

		second, created := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u1", LastName: set("New"),
			Now: tn.Clock.Now()})
		require.True(t, created)
		require.NotEqual(t, first.ID, second.ID, "a re-created subscriber is a new record")
		require.Nil(t, second.FirstName, "nothing is carried over from the deleted one")
		require.Nil(t, second.Data)
		require.Equal(t, int64(0), second.Version)
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM subscribers WHERE subscriber_id = $1", "u1"))
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM subscribers WHERE subscriber_id = $1 AND deleted = true", "u1"))

		_, _, err = db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u1", FailIfExists: true,
			Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrConflict)
		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "u1", Now: tn.Clock.Now()}))
		_, created, err = db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u1",
			FailIfExists: true, Now: tn.Clock.Now()})
		require.NoError(t, err, "fail-if-exists ignores deleted subscribers")
		require.True(t, created)
	})
}

func TestSubscriberIDCharacters(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		ids := []struct{ name, id string }{
			{"pipe", "auth0|5f1e2d"},
			{"colon", "tenant:42:user"},
			{"at and plus", "ada+herald@example.com"},
			{"slash", "org/team/ada"},
			{"spaces", " spaced  out "},
			{"unicode", "Zoë-日本語-🚀"},
			{"percent and underscore", "50%_off\\"},
			{"quote", `it's "quoted"`},
			{"prefix of others", "org"},
		}
		for _, tc := range ids {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				s, created := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: tc.id,
					FirstName: set(tc.name), Now: tn.Clock.Now()})
				require.True(t, created)
				require.Equal(t, tc.id, s.SubscriberID)
				got, err := db.SubscriberGet(ctx, tn.A, tc.id)
				require.NoError(t, err)
				require.Equal(t, s.ID, got.ID)
				res, err := db.SubscriberSearch(ctx, &store.SubscriberSearchParams{Scope: tn.A, SubscriberID: ptr(tc.id), OrderBy: store.OrderByID, Limit: 10})
				require.NoError(t, err)
				require.Len(t, res.Subscribers, 1, "subscriberId search is exact")
				require.Equal(t, s.ID, res.Subscribers[0].ID)
			})
		}
	})
}

func TestSubscriberConcurrentCreate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		const n = 50
		subs := make([]store.Subscriber, n)
		created := make([]bool, n)
		errs := parallel(n, func(i int) error {
			var err error
			subs[i], created[i], err = db.SubscriberUpsert(t.Context(), &store.SubscriberUpsertParams{
				Scope: tn.A, SubscriberID: "same", Email: set("same@example.com"),
				Now: tn.Clock.Now(),
			})
			return err
		})
		creates := 0
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, subs[0].ID, subs[i].ID, "every call sees the one subscriber")
			if created[i] {
				creates++
			}
		}
		require.Equal(t, 1, creates)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM subscribers WHERE environment_id = $1 AND subscriber_id = $2", tn.EnvA.ID, "same"))
		got, err := db.SubscriberGet(t.Context(), tn.A, "same")
		require.NoError(t, err)
		require.Equal(t, int64(n-1), got.Version, "every update was counted")
	})
}

func TestSubscriberBulkLoad(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		subs := []store.Subscriber{
			{ID: id.New(), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, SubscriberID: "b1", Email: ptr("b1@example.com"),
				Data: store.JSON(`{"k":"v"}`), CreatedAt: base, UpdatedAt: base.Add(time.Second)},
			{ID: id.New(), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, SubscriberID: "b2", CreatedAt: base, UpdatedAt: base},
		}
		require.NoError(t, db.SubscriberBulkLoad(ctx, subs))
		got, err := db.SubscriberGet(ctx, tn.A, "b1")
		require.NoError(t, err)
		require.Equal(t, subs[0].ID, got.ID)
		require.Equal(t, ptr("b1@example.com"), got.Email)
		require.JSONEq(t, `{"k":"v"}`, string(got.Data))
		require.Equal(t, base.Add(time.Second), got.UpdatedAt)
		require.Equal(t, []store.ChannelSettings{}, got.Channels)

		dup := []store.Subscriber{{ID: id.New(), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, SubscriberID: "b3", CreatedAt: base, UpdatedAt: base},
			{ID: id.New(), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, SubscriberID: "b2", CreatedAt: base, UpdatedAt: base}}
		require.ErrorIs(t, db.SubscriberBulkLoad(ctx, dup), store.ErrConflict)
		_, err = db.SubscriberGet(ctx, tn.A, "b3")
		require.ErrorIs(t, err, store.ErrNotFound, "a failed bulk insert writes nothing")
	})
}

// TestSubscriberEnvironmentIsolation: an operation scoped to another
// environment neither sees nor changes a subscriber.
func TestSubscriberEnvironmentIsolation(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		other := otherOrganization(t, db)
		orig, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Email: set("ada@example.com"),
			FirstName: set("Ada"), Now: tn.Clock.Now()})
		orig, err := db.SubscriberChannelUpdate(t.Context(), &store.ChannelUpdate{Scope: tn.A, SubscriberID: "ada",
			Channel: store.ChannelSettings{ProviderID: "fcm", IntegrationID: id.New(), Credentials: store.ChannelCredentials{DeviceTokens: []string{"t1"}}},
			Now:     tn.Clock.Now()})
		require.NoError(t, err)

		for _, scope := range []struct {
			name string
			s    store.Scope
		}{{"same organization", tn.B}, {"other organization", other}} {
			for _, tc := range []struct {
				name string
				op   func(t *testing.T, s store.Scope) error
			}{
				{"get", func(t *testing.T, s store.Scope) error {
					_, err := db.SubscriberGet(t.Context(), s, "ada")
					return err
				}},
				{"delete", func(t *testing.T, s store.Scope) error {
					return db.SubscriberDelete(t.Context(), &store.SubscriberDeleteParams{Scope: s, SubscriberID: "ada",
						Now: tn.Clock.Now()})
				}},
				{"update only", func(t *testing.T, s store.Scope) error {
					_, _, err := db.SubscriberUpsert(t.Context(), &store.SubscriberUpsertParams{Scope: s, SubscriberID: "ada",
						Email: set("evil@example.com"), UpdateOnly: true, Now: tn.Clock.Now()})
					return err
				}},
				{"channel update", func(t *testing.T, s store.Scope) error {
					_, err := db.SubscriberChannelUpdate(t.Context(), &store.ChannelUpdate{Scope: s, SubscriberID: "ada", Replace: true,
						Channel: store.ChannelSettings{ProviderID: "fcm", IntegrationID: orig.Channels[0].IntegrationID}, Now: tn.Clock.Now()})
					return err
				}},
				{"channel delete", func(t *testing.T, s store.Scope) error {
					_, err := db.SubscriberChannelDelete(t.Context(), &store.SubscriberChannelDeleteParams{Scope: s,
						SubscriberID: "ada", ProviderID: "fcm", Now: tn.Clock.Now()})
					return err
				}},
				{"search", func(t *testing.T, s store.Scope) error {
					for _, p := range []store.SubscriberSearchParams{
						{Scope: s, OrderBy: store.OrderByID, Limit: 10},
						{Scope: s, SubscriberID: ptr("ada"), OrderBy: store.OrderByID, Limit: 10},
						{Scope: s, Email: ptr("ada"), OrderBy: store.OrderByCreatedAt, Limit: 10},
						{Scope: s, Name: ptr("Ada"), OrderBy: store.OrderByUpdatedAt, Limit: 10},
					} {
						res, err := db.SubscriberSearch(t.Context(), &p)
						require.NoError(t, err)
						require.Empty(t, res.Subscribers)
						require.Zero(t, res.TotalCount)
					}
					return nil
				}},
			} {
				t.Run(scope.name+"/"+tc.name, func(t *testing.T) {
					if err := tc.op(t, scope.s); tc.name != "search" {
						require.ErrorIs(t, err, store.ErrNotFound)
					}
					got, err := db.SubscriberGet(t.Context(), tn.A, "ada")
					require.NoError(t, err)
					require.Equal(t, orig, got, "nothing changed")
				})
			}
		}

		// The same subscriberId in another environment is another subscriber.
		b, created := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.B, SubscriberID: "ada", FailIfExists: true, Now: tn.Clock.Now()})
		require.True(t, created)
		require.NotEqual(t, orig.ID, b.ID)
		require.Equal(t, tn.EnvB.ID, b.EnvironmentID)
		require.Nil(t, b.Email)
		got, err := db.SubscriberGet(t.Context(), tn.A, "ada")
		require.NoError(t, err)
		require.Equal(t, orig, got)
		require.False(t, errors.Is(db.SubscriberDelete(t.Context(), &store.SubscriberDeleteParams{Scope: tn.B,
			SubscriberID: "ada", Now: tn.Clock.Now()}), store.ErrNotFound))
		got, err = db.SubscriberGet(t.Context(), tn.A, "ada")
		require.NoError(t, err, "deleting in B leaves A's subscriber")
		require.Equal(t, orig, got)
	})
}
