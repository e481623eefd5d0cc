package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNextTimed(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	// Sunday 22 November 2026, 12:00 UTC (07:00 in New York).
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		loc    *time.Location
		unit   string
		amount float64
		cfg    timedConfig
		want   time.Time
	}{
		{"daily at 09:00 UTC", time.UTC, "days", 1, timedConfig{AtTime: "09:00"}, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)},
		{"daily at 09:00 New York", ny, "days", 1, timedConfig{AtTime: "09:00"}, time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)},
		{"every 15 minutes", time.UTC, "minutes", 15, timedConfig{}, time.Date(2026, 11, 22, 12, 15, 0, 0, time.UTC)},
		{"every 6 hours at :30", time.UTC, "hours", 6, timedConfig{AtTime: "00:30"}, time.Date(2026, 11, 22, 12, 30, 0, 0, time.UTC)},
		{"weekly on tuesday and friday", time.UTC, "weeks", 1, timedConfig{AtTime: "08:00", WeekDays: []string{"tuesday", "friday"}},
			time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)},
		{"monthly on the 1st and 15th", time.UTC, "months", 1, timedConfig{MonthlyType: "each", MonthDays: []any{"1", 15.0}},
			time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"last friday of the month", time.UTC, "months", 1, timedConfig{MonthlyType: "on", Ordinal: "last", OrdinalValue: "friday", AtTime: "17:00"},
			time.Date(2026, 11, 27, 17, 0, 0, 0, time.UTC)},
		{"second weekday of the month", time.UTC, "months", 1, timedConfig{MonthlyType: "on", Ordinal: "2", OrdinalValue: "weekday"},
			time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)},
		{"cron weekdays at 09:30", time.UTC, "days", 1, timedConfig{CronExpression: "30 9 * * 1-5"}, time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)},
		{"cron every 20 minutes", time.UTC, "", 0, timedConfig{CronExpression: "*/20 * * * *"}, time.Date(2026, 11, 22, 12, 20, 0, 0, time.UTC)},
	} {
		got, err := nextTimed(now, tc.loc, tc.unit, tc.amount, tc.cfg)
		require.NoError(t, err, tc.name)
		require.True(t, tc.want.Equal(got), "%s: want %s, got %s", tc.name, tc.want, got.UTC())
	}
}

func TestNextTimedRejectsBadConfig(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		unit string
		cfg  timedConfig
	}{
		{"bad atTime", "days", timedConfig{AtTime: "25:99"}},
		{"bad weekday", "weeks", timedConfig{WeekDays: []string{"funday"}}},
		{"bad month day", "months", timedConfig{MonthDays: []any{"40"}}},
		{"bad ordinal", "months", timedConfig{MonthlyType: "on", Ordinal: "9", OrdinalValue: "day"}},
		{"bad cron", "days", timedConfig{CronExpression: "* * * * * * *"}}, // seven fields (cron-parser takes one to six)
		{"cron out of range", "days", timedConfig{CronExpression: "99 * * * *"}},
		{"untimed unit", "seconds", timedConfig{}},
		{"impossible cron", "days", timedConfig{CronExpression: "0 0 31 2 *"}},
	} {
		_, err := nextTimed(now, time.UTC, tc.unit, 1, tc.cfg)
		require.Error(t, err, tc.name)
	}
}

func TestAddUnit(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	for unit, want := range map[string]time.Time{
		"seconds": base.Add(2 * time.Second), "minutes": base.Add(2 * time.Minute), "hours": base.Add(2 * time.Hour),
		"days": base.Add(48 * time.Hour), "weeks": base.Add(14 * 24 * time.Hour), "months": base.AddDate(0, 2, 0),
	} {
		got, err := addUnit(base, 2, unit)
		require.NoError(t, err)
		require.Equal(t, want, got, unit)
	}
	_, err := addUnit(base, 1, "fortnights")
	require.Error(t, err)
	_, err = addUnit(base, -1, "days")
	require.Error(t, err)
}
