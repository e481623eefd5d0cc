package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/seed"
	"github.com/herald-notify/herald/internal/store"
)

func TestCLISeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	seedArgs := func(more ...string) []string {
		return append([]string{"herald", "--data-dir", dir, "seed", "--subscribers", "1200", "--batch", "500"}, more...)
	}
	require.NoError(t, command(&out, &errOut).Run(context.Background(), seedArgs()))
	require.Contains(t, out.String(), "seeded 1200 subscribers into development (sqlite)")
	require.Contains(t, out.String(), "sub-00000000 … sub-00001199")
	require.Contains(t, errOut.String(), "100.0%", "the progress bar ends full")
	require.Contains(t, errOut.String(), "First start", "the keys of a first start are shown")

	err := command(&out, &errOut).Run(context.Background(), seedArgs())
	require.ErrorIs(t, err, store.ErrConflict, "seeding the same subscribers twice")
	require.NoError(t, command(&out, &errOut).Run(context.Background(), seedArgs("--from", "1200")))

	a, err := app.Open(context.Background(), config.Config{DataDir: dir})
	require.NoError(t, err)
	defer a.Close()
	env, err := a.Store.EnvironmentGetByName(t.Context(), "development")
	require.NoError(t, err)
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	want := seed.New(scope, seed.DefaultSeed).Subscriber(2399)
	got, err := a.Store.SubscriberGet(t.Context(), scope, seed.SubscriberID(2399))
	require.NoError(t, err)
	require.Equal(t, want.ID, got.ID)
	require.Equal(t, want.Email, got.Email)
	require.JSONEq(t, string(want.Data), string(got.Data))
}

func TestCLISeedMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	require.NoError(t, command(&out, &errOut).Run(context.Background(), []string{"herald", "--data-dir", dir, "seed",
		"--subscribers", "50", "--messages", "1000", "--hot-every", "10"}))
	require.Contains(t, out.String(), "seeded 1000 messages of workflow seeded-inbox")
	require.Contains(t, out.String(), "subscriber 0 holds 100 of them")

	a, err := app.Open(context.Background(), config.Config{DataDir: dir})
	require.NoError(t, err)
	defer a.Close()
	env, err := a.Store.EnvironmentGetByName(t.Context(), "development")
	require.NoError(t, err)
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	hot, err := a.Store.SubscriberGet(t.Context(), scope, seed.SubscriberID(0))
	require.NoError(t, err)
	page, err := a.Store.MessageFeed(t.Context(), &store.FeedParams{Scope: scope, SubscriberID: hot.ID, Page: 1, Limit: 10,
		Now: time.Now()})
	require.NoError(t, err)
	require.Equal(t, 100, page.TotalCount, "the feed's count comes from the counts the bulk load kept")
	require.Len(t, page.Messages, 10)
}

// TestCLISeedInboxStates: --inbox-states seeds severities, tags, archives
// and snoozes, and the inbox counts the bulk load keeps agree with the
// messages.
func TestCLISeedInboxStates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	require.NoError(t, command(&out, &errOut).Run(context.Background(), []string{"herald", "--data-dir", dir, "seed",
		"--subscribers", "20", "--messages", "2000", "--hot-every", "2", "--inbox-states"}))
	a, err := app.Open(context.Background(), config.Config{DataDir: dir})
	require.NoError(t, err)
	defer a.Close()
	env, err := a.Store.EnvironmentGetByName(t.Context(), "development")
	require.NoError(t, err)
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	hot, err := a.Store.SubscriberGet(t.Context(), scope, seed.SubscriberID(0))
	require.NoError(t, err)
	yes, no := true, false
	filters := []store.InboxFilter{{}, {Archived: &yes}, {Snoozed: &yes}, {Severity: []string{"high"}},
		{Read: &no, Archived: &no, Snoozed: &no}, {Tags: [][]string{{"billing"}}}}
	got, err := a.Store.InboxCount(t.Context(), &store.InboxCountParams{Scope: scope, SubscriberID: hot.ID, Filters: filters,
		Now: time.Now()})
	require.NoError(t, err)
	db := a.Store.Reader()
	for i, where := range []string{"true", "archived", "snoozed_until IS NOT NULL", "severity = 'high'",
		"NOT read AND NOT archived AND snoozed_until IS NULL", "tags LIKE '%\"billing\"%'"} {
		var want int
		require.NoError(t, db.QueryRow("SELECT count(*) FROM messages WHERE subscriber_id = $1 AND "+where, hot.ID).Scan(&want))
		require.Equal(t, want, got[i], where)
	}
	require.Equal(t, 1000, got[0])
	for _, n := range got[1:4] {
		require.Positive(t, n, "%v", got)
	}
}
