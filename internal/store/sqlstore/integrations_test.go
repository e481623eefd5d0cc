package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

const plainSecret = "sk_live_PLAINTEXT_SECRET_42"

// newIntegration is an integration of scope, created at base+age.
func newIntegration(scope store.Scope, providerID, channel, identifier string, active bool, age time.Duration) store.Integration {
	at := base.Add(age)
	return store.Integration{
		ID: id.NewAt(at), OrganizationID: scope.OrganizationID, EnvironmentID: scope.EnvironmentID,
		ProviderID: providerID, Channel: channel, Kind: "delivery", Name: providerID + " " + identifier, Identifier: identifier,
		Credentials: store.JSON(`{"apiKey":"` + plainSecret + `","from":"no-reply@example.com"}`),
		Active:      active, CreatedAt: at, UpdatedAt: at,
	}
}

func create(t *testing.T, db *sqlstore.DB, in store.Integration) store.Integration {
	t.Helper()
	require.NoError(t, db.IntegrationCreate(t.Context(), &in))
	return in
}

func get(t *testing.T, db *sqlstore.DB, scope store.Scope, iid string) store.Integration {
	t.Helper()
	in, err := db.IntegrationGet(t.Context(), scope, iid)
	require.NoError(t, err)
	return in
}

// primaries counts the primary integrations of a channel, deleted or not.
func primaries(t *testing.T, db *sqlstore.DB, scope store.Scope, channel string) int {
	t.Helper()
	return count(t, db, "SELECT count(*) FROM integrations WHERE environment_id = $1 AND channel = $2 AND is_primary = true",
		scope.EnvironmentID, channel)
}

func TestIntegrationCreateAndGet(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		in := newIntegration(tn.A, "sendgrid", "email", "sendgrid-main", true, 0)
		in.Configurations = store.JSON(`{"inboundWebhookEnabled":true}`)
		in.Conditions = store.JSON(`[{"isNegated":false,"type":"GROUP","value":"AND","children":[]}]`)
		in = create(t, db, in)

		got := get(t, db, tn.A, in.ID)
		require.JSONEq(t, string(in.Credentials), string(got.Credentials), "credentials come back decrypted")
		require.JSONEq(t, string(in.Configurations), string(got.Configurations))
		require.JSONEq(t, string(in.Conditions), string(got.Conditions))
		got.Credentials, got.Configurations, got.Conditions = in.Credentials, in.Configurations, in.Conditions
		require.Equal(t, in, got)
		require.True(t, got.Primary, "the first active integration of a channel is primary")

		// At rest the credentials are sealed: neither the secret nor its keys show.
		raw := rawString(t, db, "SELECT credentials FROM integrations WHERE id = $1", in.ID)
		require.NotEmpty(t, raw)
		require.NotContains(t, raw, plainSecret)
		require.NotContains(t, raw, "apiKey")
		require.NotContains(t, raw, "no-reply@example.com")

		// Defaults: no credentials, configurations or conditions.
		bare := newIntegration(tn.A, "svc", "in_app", "inbox", true, time.Second)
		bare.Credentials = nil
		bare = create(t, db, bare)
		got = get(t, db, tn.A, bare.ID)
		require.Empty(t, got.Credentials)
		require.JSONEq(t, `{}`, string(got.Configurations))
		require.JSONEq(t, `[]`, string(got.Conditions))

		_, err := db.IntegrationGet(ctx, tn.A, id.New())
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestIntegrationPrimaryOnCreate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		asPrimary := func(in store.Integration) store.Integration {
			in.Primary = true
			return in
		}
		for _, tc := range []struct {
			name        string
			in          store.Integration
			wantPrimary bool
		}{
			{"first active email", newIntegration(tn.A, "sendgrid", "email", "e1", true, 0), true},
			{"second active email", newIntegration(tn.A, "mailgun", "email", "e2", true, 1), false},
			{"first active sms", newIntegration(tn.A, "twilio", "sms", "s1", true, 2), true},
			{"inactive push", newIntegration(tn.A, "fcm", "push", "p1", false, 3), false},
			{"inactive push asked to be primary", asPrimary(newIntegration(tn.A, "fcm", "push", "p0", false, 3)), false},
			{"active push after inactive ones", newIntegration(tn.A, "apns", "push", "p2", true, 4), true},
			{"agent integration has no channel", newIntegration(tn.A, "anthropic", "", "agent", true, 5), false},
			{"the same channel in environment B", newIntegration(tn.B, "sendgrid", "email", "e1", true, 6), true},
			{"active email asked to be primary takes over", asPrimary(newIntegration(tn.A, "postmark", "email", "e3", true, 7)), true},
		} {
			// Sequential: each case depends on the ones before.
			t.Run(tc.name, func(t *testing.T) {
				in := create(t, db, tc.in)
				require.Equal(t, tc.wantPrimary, in.Primary)
				scope := store.Scope{OrganizationID: in.OrganizationID, EnvironmentID: in.EnvironmentID}
				require.Equal(t, tc.wantPrimary, get(t, db, scope, in.ID).Primary)
				if tc.wantPrimary {
					require.Equal(t, 1, primaries(t, db, scope, in.Channel), "one primary per channel")
				}
			})
		}
		require.Zero(t, primaries(t, db, tn.A, ""), "agent integrations are never primary")
		list, err := db.IntegrationList(t.Context(), &store.IntegrationListParams{OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID})
		require.NoError(t, err)
		primary := map[string]string{}
		for _, in := range list {
			if in.Primary {
				require.True(t, in.Active, "a primary is active")
				require.Empty(t, primary[in.Channel], "one primary per channel")
				primary[in.Channel] = in.Identifier
			}
		}
		require.Equal(t, map[string]string{"email": "e3", "sms": "s1", "push": "p2"}, primary)
	})
}

func TestIntegrationIdentifierUnique(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		first := create(t, db, newIntegration(tn.A, "sendgrid", "email", "mail", true, 0))

		dup := newIntegration(tn.A, "mailgun", "email", "mail", true, time.Second)
		require.ErrorIs(t, db.IntegrationCreate(ctx, &dup), store.ErrConflict)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM integrations"), "nothing written")

		create(t, db, newIntegration(tn.B, "mailgun", "email", "mail", true, time.Second)) // another environment

		// Renaming onto a taken identifier is a conflict too.
		other := create(t, db, newIntegration(tn.A, "mailgun", "email", "other", true, 2*time.Second))
		other.Identifier = "mail"
		require.ErrorIs(t, db.IntegrationUpdate(ctx, &other), store.ErrConflict)
		require.Equal(t, "other", get(t, db, tn.A, other.ID).Identifier)

		// A deleted integration frees its identifier, for a rename and a create.
		require.NoError(t, db.IntegrationDelete(ctx, &store.IntegrationDeleteParams{Scope: tn.A, ID: first.ID,
			DeletedBy: "member-1", Now: tn.Clock.Now()}))
		require.NoError(t, db.IntegrationUpdate(ctx, &other), "renaming onto a deleted one's identifier")
		require.Equal(t, "mail", get(t, db, tn.A, other.ID).Identifier)
		require.NoError(t, db.IntegrationDelete(ctx, &store.IntegrationDeleteParams{Scope: tn.A, ID: other.ID,
			DeletedBy: "member-1", Now: tn.Clock.Now()}))
		again := create(t, db, newIntegration(tn.A, "postmark", "email", "mail", true, 3*time.Second))
		require.Equal(t, "mail", get(t, db, tn.A, again.ID).Identifier)
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM integrations WHERE environment_id = $1 AND identifier = $2 AND deleted = true", tn.EnvA.ID, "mail"))
	})
}

func TestIntegrationList(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		other := otherOrganization(t, db)
		a1 := create(t, db, newIntegration(tn.A, "sendgrid", "email", "a1", true, 0))
		a2 := create(t, db, newIntegration(tn.A, "twilio", "sms", "a2", false, 1))
		a3 := create(t, db, newIntegration(tn.A, "sendgrid", "email", "a3", true, 2))
		b1 := create(t, db, newIntegration(tn.B, "sendgrid", "email", "b1", true, 3))
		gone := create(t, db, newIntegration(tn.A, "fcm", "push", "gone", true, 4))
		create(t, db, newIntegration(other, "sendgrid", "email", "x1", true, 5))
		require.NoError(t, db.IntegrationDelete(ctx, &store.IntegrationDeleteParams{Scope: tn.A, ID: gone.ID, DeletedBy: "m",
			Now: tn.Clock.Now()}))

		for _, tc := range []struct {
			name string
			p    store.IntegrationListParams
			want []string
		}{
			{"organization", store.IntegrationListParams{OrganizationID: tn.Org.ID}, []string{a1.ID, a2.ID, a3.ID, b1.ID}},
			{"organization active", store.IntegrationListParams{OrganizationID: tn.Org.ID, ActiveOnly: true}, []string{a1.ID, a3.ID, b1.ID}},
			{"environment", store.IntegrationListParams{OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID}, []string{a1.ID, a2.ID, a3.ID}},
			{"environment active", store.IntegrationListParams{OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, ActiveOnly: true}, []string{a1.ID, a3.ID}},
			{"provider", store.IntegrationListParams{OrganizationID: tn.Org.ID, ProviderID: "sendgrid"}, []string{a1.ID, a3.ID, b1.ID}},
			{"environment of another organization", store.IntegrationListParams{OrganizationID: tn.Org.ID, EnvironmentID: other.EnvironmentID}, []string{}},
			{"unknown organization", store.IntegrationListParams{OrganizationID: id.New()}, []string{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				list, err := db.IntegrationList(t.Context(), &tc.p)
				require.NoError(t, err)
				got := []string{}
				for _, in := range list {
					got = append(got, in.ID)
					require.JSONEq(t, string(a1.Credentials), string(in.Credentials), "listed credentials are decrypted")
				}
				require.Equal(t, tc.want, got, "oldest first")
			})
		}
	})
}

func TestIntegrationUpdate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		in := create(t, db, newIntegration(tn.A, "sendgrid", "email", "main", true, 0))
		require.True(t, in.Primary)

		later := tn.Clock.Advance(time.Hour)
		in.Name = "Renamed"
		in.Credentials = store.JSON(`{"apiKey":"sk_live_ROTATED_99"}`)
		in.Configurations = store.JSON(`{"inboundWebhookEnabled":false}`)
		in.UpdatedAt = later
		require.NoError(t, db.IntegrationUpdate(ctx, &in))
		got := get(t, db, tn.A, in.ID)
		require.Equal(t, "Renamed", got.Name)
		require.JSONEq(t, `{"apiKey":"sk_live_ROTATED_99"}`, string(got.Credentials))
		require.JSONEq(t, `{"inboundWebhookEnabled":false}`, string(got.Configurations))
		require.Equal(t, later, got.UpdatedAt)
		require.Equal(t, base, got.CreatedAt)
		require.True(t, got.Primary)
		raw := rawString(t, db, "SELECT credentials FROM integrations WHERE id = $1", in.ID)
		require.NotContains(t, raw, "ROTATED")
		require.NotContains(t, raw, plainSecret)

		// Deactivating drops primary; reactivating a channel without a primary restores it.
		in.Active = false
		require.NoError(t, db.IntegrationUpdate(ctx, &in))
		got = get(t, db, tn.A, in.ID)
		require.False(t, got.Active)
		require.False(t, got.Primary)
		require.Zero(t, primaries(t, db, tn.A, "email"))
		in.Active = true
		require.NoError(t, db.IntegrationUpdate(ctx, &in))
		require.True(t, get(t, db, tn.A, in.ID).Primary)

		// Activating a second one leaves the primary where it is.
		second := create(t, db, newIntegration(tn.A, "mailgun", "email", "second", false, time.Second))
		second.Active = true
		require.NoError(t, db.IntegrationUpdate(ctx, &second))
		require.False(t, get(t, db, tn.A, second.ID).Primary)
		require.True(t, get(t, db, tn.A, in.ID).Primary)

		// Primary is derived, not written: an update carrying primary=true
		// does not take it (set-primary does), and a stale copy read before a
		// set-primary does not undo it.
		second.Primary = true
		require.NoError(t, db.IntegrationUpdate(ctx, &second))
		require.False(t, get(t, db, tn.A, second.ID).Primary)
		require.True(t, get(t, db, tn.A, in.ID).Primary)
		stale := get(t, db, tn.A, in.ID)
		_, err := db.IntegrationSetPrimary(ctx, &store.IntegrationSetPrimaryParams{Scope: tn.A, ID: second.ID, Now: tn.Clock.Now()})
		require.NoError(t, err)
		stale.Name = "renamed from a stale read"
		require.NoError(t, db.IntegrationUpdate(ctx, &stale))
		require.True(t, get(t, db, tn.A, second.ID).Primary)
		require.False(t, get(t, db, tn.A, in.ID).Primary)
		require.Equal(t, 1, primaries(t, db, tn.A, "email"))

		ghost := newIntegration(tn.A, "sendgrid", "email", "ghost", true, 0)
		require.ErrorIs(t, db.IntegrationUpdate(ctx, &ghost), store.ErrNotFound)
	})
}

func TestIntegrationDelete(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		in := create(t, db, newIntegration(tn.A, "sendgrid", "email", "main", true, 0))
		at := tn.Clock.Advance(time.Minute)
		require.NoError(t, db.IntegrationDelete(ctx, &store.IntegrationDeleteParams{Scope: tn.A, ID: in.ID, DeletedBy: "member-7",
			Now: tn.Clock.Now()}))

		var deleted, active, primary bool
		var deletedAt int64
		var deletedBy string
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT deleted, deleted_at, deleted_by, active, is_primary FROM integrations WHERE id = $1",
			in.ID).Scan(&deleted, &deletedAt, &deletedBy, &active, &primary))
		require.True(t, deleted, "the row is kept, marked deleted")
		require.Equal(t, at.UnixMilli(), deletedAt)
		require.Equal(t, "member-7", deletedBy)
		require.False(t, active)
		require.False(t, primary)

		_, err := db.IntegrationGet(ctx, tn.A, in.ID)
		require.ErrorIs(t, err, store.ErrNotFound)
		list, err := db.IntegrationList(ctx, &store.IntegrationListParams{OrganizationID: tn.Org.ID})
		require.NoError(t, err)
		require.Empty(t, list)
		require.ErrorIs(t, db.IntegrationDelete(ctx, &store.IntegrationDeleteParams{Scope: tn.A, ID: in.ID, DeletedBy: "member-7",
			Now: tn.Clock.Now()}), store.ErrNotFound, "second delete")
		require.ErrorIs(t, db.IntegrationUpdate(ctx, &in), store.ErrNotFound, "a deleted integration is not updated")
		_, err = db.IntegrationSetPrimary(ctx, &store.IntegrationSetPrimaryParams{Scope: tn.A, ID: in.ID, Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound)

		next := create(t, db, newIntegration(tn.A, "mailgun", "email", "next", true, time.Second))
		require.True(t, next.Primary, "deleting the primary frees the channel")
	})
}

func TestIntegrationSetPrimary(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		e1 := create(t, db, newIntegration(tn.A, "sendgrid", "email", "e1", true, 0))
		e2 := create(t, db, newIntegration(tn.A, "mailgun", "email", "e2", true, 1))
		e3 := create(t, db, newIntegration(tn.A, "postmark", "email", "e3", false, 2))
		s1 := create(t, db, newIntegration(tn.A, "twilio", "sms", "s1", true, 3))
		b1 := create(t, db, newIntegration(tn.B, "sendgrid", "email", "b1", true, 4))

		for _, target := range []store.Integration{e2, e3, e1, e1} {
			got, err := db.IntegrationSetPrimary(ctx, &store.IntegrationSetPrimaryParams{Scope: tn.A, ID: target.ID, Now: tn.Clock.Now()})
			require.NoError(t, err)
			require.True(t, got.Primary)
			require.True(t, got.Active, "a primary is active")
			for _, in := range []store.Integration{e1, e2, e3} {
				require.Equal(t, in.ID == target.ID, get(t, db, tn.A, in.ID).Primary)
			}
			require.Equal(t, 1, primaries(t, db, tn.A, "email"))
			require.True(t, get(t, db, tn.A, s1.ID).Primary, "other channels keep their primary")
			require.True(t, get(t, db, tn.B, b1.ID).Primary, "other environments keep their primary")
		}
		require.True(t, get(t, db, tn.A, e3.ID).Active, "made active when made primary, and stays so")

		_, err := db.IntegrationSetPrimary(ctx, &store.IntegrationSetPrimaryParams{Scope: tn.A, ID: id.New(), Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestIntegrationPrimaryConcurrent(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		const n = 8
		ins := make([]store.Integration, n)
		errs := parallel(n, func(i int) error {
			ins[i] = newIntegration(tn.A, "sendgrid", "email", fmt.Sprint("c", i), true, time.Duration(i))
			return db.IntegrationCreate(t.Context(), &ins[i])
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, 1, primaries(t, db, tn.A, "email"), "concurrent creates make one primary")

		errs = parallel(n, func(i int) error {
			_, err := db.IntegrationSetPrimary(t.Context(), &store.IntegrationSetPrimaryParams{Scope: tn.A, ID: ins[i].ID,
				Now: tn.Clock.Now()})
			return err
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, 1, primaries(t, db, tn.A, "email"), "concurrent set-primary leaves one primary")
	})
}

func TestIntegrationForCredentials(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		// spec is one integration of the case: identifier, provider ("" is
		// the case's provider), active, then made primary or deleted.
		type spec struct {
			identifier, provider string
			active, primary      bool
			deleted, inB         bool
		}
		for i, tc := range []struct {
			name       string
			ins        []spec
			identifier string
			want       string // identifier of the pick; "" is ErrNotFound
		}{
			{name: "identifier picks that one over primary and newer",
				ins:        []spec{{identifier: "p", active: true, primary: true}, {identifier: "x", active: true}, {identifier: "n", active: true}},
				identifier: "x", want: "x"},
			{name: "identifier of an inactive integration",
				ins:        []spec{{identifier: "p", active: true, primary: true}, {identifier: "x"}},
				identifier: "x"},
			{name: "identifier of a deleted integration",
				ins:        []spec{{identifier: "p", active: true, primary: true}, {identifier: "x", active: true, deleted: true}},
				identifier: "x"},
			{name: "identifier of another provider",
				ins:        []spec{{identifier: "p", active: true, primary: true}, {identifier: "x", provider: "other", active: true}},
				identifier: "x"},
			{name: "identifier in another environment",
				ins:        []spec{{identifier: "p", active: true, primary: true}, {identifier: "x", active: true, inB: true}},
				identifier: "x"},
			{name: "primary over newer",
				ins:  []spec{{identifier: "old", active: true}, {identifier: "p", active: true, primary: true}, {identifier: "new", active: true}},
				want: "p"},
			{name: "newest without a primary of the provider",
				ins:  []spec{{identifier: "o", provider: "other", active: true, primary: true}, {identifier: "old", active: true}, {identifier: "new", active: true}},
				want: "new"},
			{name: "newest active when the newest is inactive",
				ins:  []spec{{identifier: "o", provider: "other", active: true, primary: true}, {identifier: "old", active: true}, {identifier: "new"}},
				want: "old"},
			{name: "newest active when the newest is deleted",
				ins:  []spec{{identifier: "o", provider: "other", active: true, primary: true}, {identifier: "old", active: true}, {identifier: "new", active: true, deleted: true}},
				want: "old"},
			{name: "only inactive ones",
				ins: []spec{{identifier: "a"}, {identifier: "b"}}},
			{name: "only in another environment",
				ins: []spec{{identifier: "a", active: true, inB: true}}},
			{name: "none at all"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				// Each case has its own provider and channel, so cases do not meet.
				provider, channel := fmt.Sprint("prov-", i), fmt.Sprint("chan-", i)
				for j, s := range tc.ins {
					scope := tn.A
					if s.inB {
						scope = tn.B
					}
					p := provider
					if s.provider != "" {
						p = s.provider + "-" + provider
					}
					in := create(t, db, newIntegration(scope, p, channel, provider+"-"+s.identifier, s.active, time.Duration(j)*time.Second))
					if s.primary {
						_, err := db.IntegrationSetPrimary(t.Context(), &store.IntegrationSetPrimaryParams{Scope: scope,
							ID: in.ID, Now: tn.Clock.Now()})
						require.NoError(t, err)
					}
					if s.deleted {
						require.NoError(t, db.IntegrationDelete(t.Context(), &store.IntegrationDeleteParams{Scope: scope,
							ID: in.ID, DeletedBy: "m", Now: tn.Clock.Now()}))
					}
				}
				ident := ""
				if tc.identifier != "" {
					ident = provider + "-" + tc.identifier
				}
				got, err := db.IntegrationForCredentials(t.Context(), &store.IntegrationForCredentialsParams{Scope: tn.A,
					ProviderID: provider, Identifier: ident})
				if tc.want == "" {
					require.ErrorIs(t, err, store.ErrNotFound)
					return
				}
				require.NoError(t, err)
				require.Equal(t, provider+"-"+tc.want, got.Identifier)
				require.True(t, strings.HasPrefix(string(got.Credentials), "{"), "decrypted")
			})
		}
	})
}

// TestIntegrationEnvironmentIsolation: an operation scoped to another
// environment neither sees nor changes an integration.
func TestIntegrationEnvironmentIsolation(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		other := otherOrganization(t, db)
		orig := get(t, db, tn.A, create(t, db, newIntegration(tn.A, "sendgrid", "email", "main", true, 0)).ID)

		for _, scope := range []struct {
			name string
			s    store.Scope
		}{{"same organization", tn.B}, {"other organization", other}} {
			for _, tc := range []struct {
				name string
				op   func(t *testing.T, s store.Scope) error
			}{
				{"get", func(t *testing.T, s store.Scope) error {
					_, err := db.IntegrationGet(t.Context(), s, orig.ID)
					return err
				}},
				{"update", func(t *testing.T, s store.Scope) error {
					in := orig
					in.OrganizationID, in.EnvironmentID, in.Name, in.Active = s.OrganizationID, s.EnvironmentID, "Hijacked", false
					return db.IntegrationUpdate(t.Context(), &in)
				}},
				{"delete", func(t *testing.T, s store.Scope) error {
					return db.IntegrationDelete(t.Context(), &store.IntegrationDeleteParams{Scope: s, ID: orig.ID,
						DeletedBy: "intruder", Now: tn.Clock.Now()})
				}},
				{"set primary", func(t *testing.T, s store.Scope) error {
					_, err := db.IntegrationSetPrimary(t.Context(), &store.IntegrationSetPrimaryParams{Scope: s, ID: orig.ID,
						Now: tn.Clock.Now()})
					return err
				}},
				{"for credentials by identifier", func(t *testing.T, s store.Scope) error {
					_, err := db.IntegrationForCredentials(t.Context(), &store.IntegrationForCredentialsParams{Scope: s,
						ProviderID: "sendgrid", Identifier: "main"})
					return err
				}},
				{"for credentials by primary", func(t *testing.T, s store.Scope) error {
					_, err := db.IntegrationForCredentials(t.Context(), &store.IntegrationForCredentialsParams{Scope: s,
						ProviderID: "sendgrid", Identifier: ""})
					return err
				}},
			} {
				t.Run(scope.name+"/"+tc.name, func(t *testing.T) {
					require.ErrorIs(t, tc.op(t, scope.s), store.ErrNotFound)
					require.Equal(t, orig, get(t, db, tn.A, orig.ID), "nothing changed")
				})
			}
		}
		list, err := db.IntegrationList(t.Context(), &store.IntegrationListParams{OrganizationID: other.OrganizationID})
		require.NoError(t, err)
		require.Empty(t, list)
		list, err = db.IntegrationList(t.Context(), &store.IntegrationListParams{OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvB.ID})
		require.NoError(t, err)
		require.Empty(t, list)
	})
}
