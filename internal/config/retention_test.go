package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "30d", want: 30 * 24 * time.Hour},
		{in: "1.5d", want: 36 * time.Hour},
		{in: "90s", want: 90 * time.Second},
		{in: "12h", want: 12 * time.Hour},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "0", want: 0},
		{in: "0d", want: 0},
		{in: "-1h", bad: true},
		{in: "-2d", bad: true},
		{in: "abc", bad: true},
		{in: "d", bad: true},
		{in: "30", bad: true},
		{in: "30 d", bad: true},
		{in: "infd", bad: true},
		{in: "NaNd", bad: true},
		{in: "0x10d", bad: true},
		{in: "1e9d", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRetention(tc.in)
			if tc.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRetentionSettings(t *testing.T) {
	t.Parallel()
	r, err := RetentionSettings{}.Parse()
	require.NoError(t, err)
	require.Equal(t, Retention{Activity: 30 * 24 * time.Hour, Inbox: 365 * 24 * time.Hour, Interval: time.Hour}, r, "the defaults")
	require.NoError(t, Config{}.Validate())

	r, err = RetentionSettings{Activity: "0", Inbox: "1.5d", Interval: "90s"}.Parse()
	require.NoError(t, err)
	require.Equal(t, Retention{Activity: 0, Inbox: 36 * time.Hour, Interval: 90 * time.Second}, r, "0 keeps forever")

	for _, tc := range []struct {
		s    RetentionSettings
		name string
	}{
		{RetentionSettings{Activity: "-1h"}, "HERALD_RETENTION_ACTIVITY (--retention-activity)"},
		{RetentionSettings{Inbox: "abc"}, "HERALD_RETENTION_INBOX (--retention-inbox)"},
		{RetentionSettings{Interval: "0"}, "HERALD_RETENTION_INTERVAL (--retention-interval)"},
		{RetentionSettings{Interval: "-5m"}, "HERALD_RETENTION_INTERVAL (--retention-interval)"},
	} {
		_, err := tc.s.Parse()
		require.ErrorContains(t, err, tc.name)
		require.ErrorContains(t, Config{Retention: tc.s}.Validate(), tc.name, "Herald refuses to start with it")
	}
}
