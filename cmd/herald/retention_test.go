package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// TestServeRefusesBadRetention: an invalid or negative retention setting,
// or an interval of 0, stops herald serve at start, naming the setting.
func TestServeRefusesBadRetention(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag, value, name string
	}{
		{"--retention-activity", "-1h", "HERALD_RETENTION_ACTIVITY (--retention-activity)"},
		{"--retention-inbox", "abc", "HERALD_RETENTION_INBOX (--retention-inbox)"},
		{"--retention-interval", "0", "HERALD_RETENTION_INTERVAL (--retention-interval)"},
	} {
		_, err := run(t, "--data-dir", t.TempDir(), "serve", "--addr", "127.0.0.1:0", tc.flag, tc.value)
		require.ErrorContains(t, err, tc.name)
	}
}

// TestServeRetentionFromEnvironment: the settings are read from HERALD_*
// variables too.
func TestServeRetentionFromEnvironment(t *testing.T) {
	t.Setenv("HERALD_RETENTION_INBOX", "-2d")
	_, err := run(t, "--data-dir", t.TempDir(), "serve", "--addr", "127.0.0.1:0")
	require.ErrorContains(t, err, "HERALD_RETENTION_INBOX (--retention-inbox): \"-2d\" is negative")
}

// TestServePurges: herald serve runs the purge within one interval and
// exports what it deleted, every kind from the start, and the store's size.
func TestServePurges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := app.Open(t.Context(), config.Config{DataDir: dir})
	require.NoError(t, err)
	old := time.Now().Add(-400 * 24 * time.Hour)
	var msgs []store.Message
	for range 5 {
		msgs = append(msgs, store.Message{ID: id.New(), OrganizationID: "o", EnvironmentID: "e", NotificationID: id.New(),
			JobID: id.New(), SubscriberID: "s", WorkflowID: "w", TemplateIdentifier: "w", TransactionID: id.New(), Channel: "in_app",
			ProviderID: "herald", Content: "c", Status: "sent", CreatedAt: old, UpdatedAt: old})
	}
	require.NoError(t, a.Store.MessageBulkLoad(t.Context(), msgs))
	require.NoError(t, a.Close())

	var out, logs syncBuffer
	base := startServe(t, config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "all", LogLevel: "info", LogFormat: "json",
		Retention: config.RetentionSettings{Interval: "100ms"}}, testConsole(&out, &logs, nil))
	metricsText := func() string {
		res, err := http.Get(base + "/metrics")
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}
	text := metricsText()
	for _, kind := range []string{"notifications", "jobs", "execution_details", "messages", "transactions", "inbox_messages"} {
		require.Contains(t, text, `herald_retention_deleted_total{kind="`+kind+`"}`)
	}
	require.Eventually(t, func() bool {
		text := metricsText()
		size := regexp.MustCompile(`(?m)^herald_store_size_bytes (\d\S*)$`).FindStringSubmatch(text)
		return strings.Contains(text, `herald_retention_deleted_total{kind="inbox_messages"} 5`) && size != nil && size[1] != "0"
	}, 10*time.Second, 20*time.Millisecond)
	require.Contains(t, logs.String(), `"msg":"purged"`)
}
