package seed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

var scope = store.Scope{OrganizationID: "org", EnvironmentID: "env"}

func TestSubscribersAreDeterministicAndValid(t *testing.T) {
	t.Parallel()
	g := New(scope, DefaultSeed)
	require.Equal(t, g.Subscriber(4242), New(scope, DefaultSeed).Subscriber(4242), "same seed, same subscriber")
	require.NotEqual(t, g.Subscriber(4242).Email, New(scope, 2).Subscriber(4242).Email, "another seed, other people")

	ids, emails := map[string]bool{}, map[string]bool{}
	var prev string
	for n, s := range g.Batch(nil, 0, 5000) {
		require.True(t, id.Valid(s.ID), s.ID)
		require.Greater(t, s.ID, prev, "_id sorts like n")
		prev = s.ID
		require.Equal(t, SubscriberID(n), s.SubscriberID)
		require.Equal(t, Epoch.Add(time.Duration(n)*Spacing), s.CreatedAt)
		require.False(t, s.UpdatedAt.Before(s.CreatedAt))
		require.Equal(t, scope.EnvironmentID, s.EnvironmentID)

		// What the API would accept: the seeded data is data a client could send.
		a, err := mail.ParseAddress(*s.Email)
		require.NoError(t, err, *s.Email)
		require.Equal(t, *s.Email, a.Address)
		require.Equal(t, strings.ToLower(*s.Email), *s.Email)
		_, err = language.Parse(*s.Locale)
		require.NoError(t, err)
		_, err = time.LoadLocation(*s.Timezone)
		require.NoError(t, err)

		require.False(t, ids[s.ID] || emails[*s.Email], "unique _id and e-mail")
		ids[s.ID], emails[*s.Email] = true, true
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	g := New(scope, DefaultSeed)
	var calls atomic.Int64
	seen := make([]atomic.Bool, 2350)
	insert := func(_ context.Context, subs []store.Subscriber) error {
		calls.Add(1)
		for _, s := range subs {
			var n int
			_, err := fmt.Sscanf(s.SubscriberID, "sub-%d", &n)
			require.NoError(t, err)
			require.False(t, seen[n].Swap(true), "each subscriber once")
		}
		return nil
	}
	var progressed int
	err := Load(context.Background(), g, insert, LoadOptions{From: 100, Count: 2250, Batch: 500, Workers: 3,
		Progress: func(n int) { progressed += n }})
	require.NoError(t, err)
	require.Equal(t, 2250, progressed)
	require.EqualValues(t, 5, calls.Load())
	for n := range seen {
		require.Equal(t, n >= 100, seen[n].Load(), n)
	}

	boom := errors.New("boom")
	err = Load(context.Background(), g, func(context.Context, []store.Subscriber) error { return boom },
		LoadOptions{Count: 10000, Batch: 100})
	require.ErrorIs(t, err, boom)
}

func TestProgress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := NewProgress(&buf, 2000)
	now := p.start
	p.now = func() time.Time { return now }
	now = now.Add(time.Second)
	p.Add(500)
	require.Contains(t, buf.String(), " 25.0%  500/2,000  500 rows/s  elapsed 0:01  ETA 0:03")
	now = now.Add(3 * time.Second)
	p.Add(1500)
	p.Finish()
	require.Contains(t, buf.String(), "[##############################] 100.0%  2,000/2,000")
	require.True(t, strings.HasSuffix(buf.String(), " \n"))
	require.Equal(t, "1,234,567", thousands(1234567))
	require.Equal(t, "1:01:05", clock(time.Hour+65*time.Second))
}
