package sqlstore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestSubscriberChannelUpdate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		fcm1, fcm2, slack := id.New(), id.New(), id.New()
		type step struct {
			provider, integration string
			creds                 store.ChannelCredentials
			replace               bool
			max                   int
			wantErr               error
		}
		for _, tc := range []struct {
			name  string
			steps []step
			want  []store.ChannelSettings
		}{
			{
				name:  "first credentials create the entry",
				steps: []step{{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a", "b"}}}},
				want:  []store.ChannelSettings{{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{DeviceTokens: []string{"a", "b"}}}},
			},
			{
				name: "append merges fields and appends new tokens in order",
				steps: []step{
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a", "b"}, Title: "t"}},
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"c", "b", "a", "d", "c"}, WebhookURL: "https://hook"}},
				},
				want: []store.ChannelSettings{{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{
					DeviceTokens: []string{"a", "b", "c", "d"}, Title: "t", WebhookURL: "https://hook"}}},
			},
			{
				name: "append without tokens keeps the stored tokens",
				steps: []step{
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a"}}},
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{State: "ok"}},
				},
				want: []store.ChannelSettings{{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{DeviceTokens: []string{"a"}, State: "ok"}}},
			},
			{
				name: "replace replaces every field and the tokens",
				steps: []step{
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a", "b"}, Title: "t"}},
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"z"}}, replace: true},
				},
				want: []store.ChannelSettings{{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{DeviceTokens: []string{"z"}}}},
			},
			{
				name: "one entry per integration",
				steps: []step{
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a"}}},
					{provider: "fcm", integration: fcm2, creds: store.ChannelCredentials{DeviceTokens: []string{"b"}}},
					{provider: "slack", integration: slack, creds: store.ChannelCredentials{WebhookURL: "https://slack/1"}},
					{provider: "slack", integration: slack, creds: store.ChannelCredentials{WebhookURL: "https://slack/2"}},
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"c"}}},
				},
				want: []store.ChannelSettings{
					{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{DeviceTokens: []string{"a", "c"}}},
					{ProviderID: "fcm", IntegrationID: fcm2, Credentials: store.ChannelCredentials{DeviceTokens: []string{"b"}}},
					{ProviderID: "slack", IntegrationID: slack, Credentials: store.ChannelCredentials{WebhookURL: "https://slack/2"}},
				},
			},
			{
				name: "too many tokens writes nothing",
				steps: []step{
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a", "b"}}, max: 3},
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"c", "d"}, Title: "x"}, max: 3, wantErr: store.ErrTooManyTokens},
					{provider: "fcm", integration: fcm2, creds: store.ChannelCredentials{DeviceTokens: []string{"1", "2", "3", "4"}}, max: 3, wantErr: store.ErrTooManyTokens},
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a", "c"}}, max: 3},
				},
				want: []store.ChannelSettings{{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{DeviceTokens: []string{"a", "b", "c"}}}},
			},
			{
				name: "replace is bounded too",
				steps: []step{
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"a"}}, max: 2},
					{provider: "fcm", integration: fcm1, creds: store.ChannelCredentials{DeviceTokens: []string{"x", "y", "z"}}, replace: true, max: 2, wantErr: store.ErrTooManyTokens},
				},
				want: []store.ChannelSettings{{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{DeviceTokens: []string{"a"}}}},
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				subID := "ch-" + tc.name
				s, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: subID, Now: tn.Clock.Now()})
				for i, st := range tc.steps {
					got, err := db.SubscriberChannelUpdate(ctx, &store.ChannelUpdate{Scope: tn.A, SubscriberID: subID, Replace: st.replace,
						MaxDeviceTokens: st.max, Channel: store.ChannelSettings{ProviderID: st.provider, IntegrationID: st.integration, Credentials: st.creds},
						Now: tn.Clock.Now()})
					if st.wantErr != nil {
						require.ErrorIs(t, err, st.wantErr, "step %d", i)
						after, err := db.SubscriberGet(ctx, tn.A, subID)
						require.NoError(t, err)
						require.Equal(t, s, after, "step %d: a failed update writes nothing", i)
						continue
					}
					require.NoError(t, err, "step %d", i)
					require.Equal(t, s.Version+1, got.Version, "step %d", i)
					s = got
				}
				require.Equal(t, tc.want, s.Channels)
				got, err := db.SubscriberGet(ctx, tn.A, subID)
				require.NoError(t, err)
				require.Equal(t, s, got)
			})
		}
	})
}

func TestSubscriberChannelUpdateKeepsIdentifier(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u", Now: tn.Clock.Now()})
		iid := id.New()
		s, err := db.SubscriberChannelUpdate(ctx, &store.ChannelUpdate{Scope: tn.A, SubscriberID: "u", Channel: store.ChannelSettings{
			ProviderID: "slack", IntegrationIdentifier: "slack-main", IntegrationID: iid,
			Credentials: store.ChannelCredentials{WebhookURL: "w", Channel: "c", AlertUID: "a", Title: "t", ImageURL: "i", State: "s", ExternalURL: "e"}},
			Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, []store.ChannelSettings{{ProviderID: "slack", IntegrationIdentifier: "slack-main", IntegrationID: iid,
			Credentials: store.ChannelCredentials{WebhookURL: "w", Channel: "c", AlertUID: "a", Title: "t", ImageURL: "i", State: "s", ExternalURL: "e"}}},
			s.Channels, "every credentials field is kept")

		_, err = db.SubscriberChannelUpdate(ctx, &store.ChannelUpdate{Scope: tn.A, SubscriberID: "absent",
			Channel: store.ChannelSettings{ProviderID: "slack", IntegrationID: iid}, Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = db.SubscriberChannelDelete(ctx, &store.SubscriberChannelDeleteParams{Scope: tn.A, SubscriberID: "absent",
			ProviderID: "slack", Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestSubscriberChannelDelete(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u", Now: tn.Clock.Now()})
		fcm1, apns, fcm2 := id.New(), id.New(), id.New()
		for _, c := range []store.ChannelSettings{
			{ProviderID: "fcm", IntegrationID: fcm1, Credentials: store.ChannelCredentials{DeviceTokens: []string{"a"}}},
			{ProviderID: "apns", IntegrationID: apns, Credentials: store.ChannelCredentials{DeviceTokens: []string{"b"}}},
			{ProviderID: "fcm", IntegrationID: fcm2, Credentials: store.ChannelCredentials{DeviceTokens: []string{"c"}}},
		} {
			_, err := db.SubscriberChannelUpdate(ctx, &store.ChannelUpdate{Scope: tn.A, SubscriberID: "u", Channel: c, Now: tn.Clock.Now()})
			require.NoError(t, err)
		}
		s, err := db.SubscriberChannelDelete(ctx, &store.SubscriberChannelDeleteParams{Scope: tn.A, SubscriberID: "u",
			ProviderID: "fcm", Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, []store.ChannelSettings{{ProviderID: "apns", IntegrationID: apns, Credentials: store.ChannelCredentials{DeviceTokens: []string{"b"}}}}, s.Channels)

		s, err = db.SubscriberChannelDelete(ctx, &store.SubscriberChannelDeleteParams{Scope: tn.A, SubscriberID: "u",
			ProviderID: "fcm", Now: tn.Clock.Now()})
		require.NoError(t, err, "deleting a provider without entries is not an error")
		require.Len(t, s.Channels, 1)
		s, err = db.SubscriberChannelDelete(ctx, &store.SubscriberChannelDeleteParams{Scope: tn.A, SubscriberID: "u",
			ProviderID: "apns", Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, []store.ChannelSettings{}, s.Channels)
		got, err := db.SubscriberGet(ctx, tn.A, "u")
		require.NoError(t, err)
		require.Equal(t, []store.ChannelSettings{}, got.Channels)
	})
}

func TestSubscriberChannelConcurrentAppends(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "u", Now: tn.Clock.Now()})
		iid := id.New()
		const n = 20
		errs := parallel(n, func(i int) error {
			_, err := db.SubscriberChannelUpdate(t.Context(), &store.ChannelUpdate{Scope: tn.A, SubscriberID: "u", MaxDeviceTokens: 100,
				Channel: store.ChannelSettings{ProviderID: "fcm", IntegrationID: iid, Credentials: store.ChannelCredentials{DeviceTokens: []string{fmt.Sprint("tok-", i)}}},
				Now:     tn.Clock.Now()})
			return err
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		s, err := db.SubscriberGet(t.Context(), tn.A, "u")
		require.NoError(t, err)
		require.Len(t, s.Channels, 1)
		want := make([]string, n)
		for i := range n {
			want[i] = fmt.Sprint("tok-", i)
		}
		require.ElementsMatch(t, want, s.Channels[0].Credentials.DeviceTokens, "no append is lost")
		require.Equal(t, int64(n), s.Version)
	})
}
