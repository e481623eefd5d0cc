package engine

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// TestCronNext pins the rules of cron-parser 4.9.0 that Herald follows,
// each with the instant cron-parser gives (crondiff_test.go checks many
// more against the library itself).
func TestCronNext(t *testing.T) {
	t.Parallel()
	utc := time.UTC
	newYork, lordHowe, santiago, kolkata := cronLoc(t, "America/New_York"), cronLoc(t, "Australia/Lord_Howe"),
		cronLoc(t, "America/Santiago"), cronLoc(t, "Asia/Kolkata")
	tests := []struct {
		name, expr string
		from       string
		loc        *time.Location
		want       string
	}{
		{"five fields start with the minute", "0 9 * * 1", "2026-03-08T06:00:00Z", newYork, "2026-03-09T13:00:00Z"},
		{"strictly after a match", "0 9 * * 1", "2026-03-09T13:00:00Z", newYork, "2026-03-16T13:00:00Z"},
		{"milliseconds of the start are dropped", "* * * * * *", "2026-01-01T10:00:00.500Z", utc, "2026-01-01T10:00:01Z"},
		{"fewer fields default from the left", "", "2026-01-01T00:00:00Z", utc, "2026-01-01T00:01:00Z"},
		{"predefined", "@weekly", "2026-01-01T00:00:00Z", utc, "2026-01-04T00:00:00Z"},
		{"sunday as 7, in the zone", "0 9 * * 7", "2026-01-01T00:00:00Z", kolkata, "2026-01-04T03:30:00Z"},
		{"a step past the field keeps its start", "*/100 * * * *", "2026-01-01T00:00:00Z", utc, "2026-01-01T01:00:00Z"},
		{"weekday n/step runs to 7, which adds sunday", "0 9 * * 2/3", "2026-01-01T00:00:00Z", utc, "2026-01-02T09:00:00Z"},
		{"day of month or day of week", "0 9 13 * 5", "2026-02-01T00:00:00Z", utc, "2026-02-06T09:00:00Z"},
		{"0-6 is not a wildcard: every day", "0 0 15 * 0-6", "2026-01-01T00:00:00Z", utc, "2026-01-02T00:00:00Z"},
		{"1-7 is a wildcard: the 15th", "0 0 15 * 1-7", "2026-01-01T00:00:00Z", utc, "2026-01-15T00:00:00Z"},
		{"1-30 is a wildcard in April: mondays", "0 0 1-30 * 1", "2026-04-01T00:00:00Z", utc, "2026-04-06T00:00:00Z"},
		{"1-30 is not one in May: either", "0 0 1-30 * 1", "2026-05-01T00:00:00Z", utc, "2026-05-02T00:00:00Z"},
		{"last day of the month", "0 0 L 2 *", "2028-01-01T00:00:00Z", utc, "2028-02-29T00:00:00Z"},
		{"last friday", "0 0 * * 5L", "2026-01-01T00:00:00Z", utc, "2026-01-30T00:00:00Z"},
		{"second monday", "0 0 * * 1#2", "2026-01-01T00:00:00Z", utc, "2026-01-12T00:00:00Z"},
		{"29 february eight years on", "0 0 29 2 *", "2097-03-01T00:00:00Z", utc, "2104-02-29T00:00:00Z"},
		{"skipped 02:30 fires at 03:30", "30 2 * * *", "2026-03-08T05:00:00Z", newYork, "2026-03-08T07:30:00Z"},
		{"repeated 01:30 fires at the first", "30 1 * * *", "2026-11-01T04:00:00Z", newYork, "2026-11-01T05:30:00Z"},
		{"and not at the second", "30 1 * * *", "2026-11-01T05:30:00Z", newYork, "2026-11-02T06:30:00Z"},
		{"skipped half hour passes the day", "0 2 * * *", "2026-10-03T12:00:00Z", lordHowe, "2026-10-04T15:00:00Z"},
		{"repeated half hour fires at the first", "45 1 * * *", "2026-04-04T12:00:00Z", lordHowe, "2026-04-04T14:45:00Z"},
		{"and at the second", "45 1 * * *", "2026-04-04T14:45:00Z", lordHowe, "2026-04-04T15:15:00Z"},
		{"skipped midnight passes the day", "0 0 * * *", "2026-09-05T12:00:00Z", santiago, "2026-09-07T03:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := nextCron(tt.expr, cronTime(t, tt.from), tt.loc)
			require.NoError(t, err)
			require.Equal(t, cronTime(t, tt.want), got.UTC())
			require.Equal(t, tt.loc, got.Location())
		})
	}
}

// TestCronRefused: what cron-parser refuses to parse, and what it parses
// but cannot iterate.
func TestCronRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr  string
		unreachable bool // parses, but next gives up
	}{
		{name: "seven fields", expr: "0 0 9 * * 1 2026"},
		{name: "minute 60", expr: "60 * * * *"},
		{name: "day of week 8", expr: "0 0 * * 8"},
		{name: "reversed range", expr: "5-1 * * * *"},
		{name: "step 0", expr: "*/0 * * * *"},
		{name: "unknown name", expr: "0 9 * * MONDAY"},
		{name: "empty list element", expr: "1,,2 * * * *"},
		{name: "question mark in the hour", expr: "0 0 ? * * *"},
		{name: "L in a range", expr: "0 0 L-5 * *"},
		{name: "# with a list", expr: "0 0 * * 1#1,2"},
		{name: "# past 5", expr: "0 0 * * 1#6"},
		{name: "30 february", expr: "0 0 30 2 *"},
		{name: "31 april or june", expr: "0 0 31 4,6 *", unreachable: true},
		{name: "a # that is not whole", expr: "0 0 * * 1#1.5", unreachable: true},
		{name: "L without a weekday", expr: "0 0 * * L"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.NotEmpty(t, CheckCron(tt.expr))
			c, err := parseCronSpec(tt.expr)
			if tt.unreachable {
				require.NoError(t, err)
				_, err = c.next(cronCheckFrom, time.UTC)
				require.True(t, errors.Is(err, errCronUnreachable), "%v", err)
			}
		})
	}
}

// TestCheckCronAccepts: forms cron-parser accepts, some of them loosely.
func TestCheckCronAccepts(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"0 9 * * 1", "*/15 * * * *", "5-30/5 * * * *", "0 9 * * MON-fri", "0 0 1 jan,JUL *",
		"*/10 * * * * *", "0 12 ? * ?", "0 0 L * *", "0 0 * * 5L", "0 0 * * 1#5", "0 0 29 2 *", "@daily", "", "1 * *",
		"-0 * * * *", "0- * * * *", "1-5-9 * * * *", "5/100 * * * *", "0 0 * * 1#0x3"} {
		require.Empty(t, CheckCron(expr), "%q", expr)
	}
}

// TestJSNumber: the numbers cron-parser reads with Number() (jsvalue; after # in
// particular, before any check of the characters).
func TestJSNumber(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		in   string
		want float64
	}{
		{"", 0}, {"5", 5}, {"007", 7}, {"-0", 0}, {"-5", -5}, {"+3", 3}, {"1.5", 1.5}, {".5", 0.5}, {"5.", 5},
		{"2e0", 2}, {"1E+1", 10}, {"1e400", math.Inf(1)}, {"-Infinity", math.Inf(-1)}, {"0x1F", 31}, {"0b11", 3},
		{"0o7", 7}, {"-0x1", nan}, {"0x", nan}, {"0x-1", nan}, {".", nan}, {"e5", nan}, {"1e", nan}, {"5L", nan},
		{"1_0", nan}, {"inf", nan}, {"0x1_0", nan}, {"-", nan}, {"--1", nan},
	}
	for _, tt := range tests {
		got := jsvalue.StringToNumber(tt.in)
		if math.IsNaN(tt.want) {
			require.True(t, math.IsNaN(got), "Number(%q) = %v, want NaN", tt.in, got)
			continue
		}
		require.Equal(t, tt.want, got, "Number(%q)", tt.in)
	}
}

// FuzzCron: any string parses or is refused, and next neither panics nor
// runs long.
func FuzzCron(f *testing.F) {
	for _, e := range cronHandExprs {
		f.Add(e.expr)
	}
	f.Add("0 0 * 2 1#5")
	f.Add("1-7/2,L,5L,?L 0x 2#3")
	newYork, lordHowe := cronLoc(f, "America/New_York"), cronLoc(f, "Australia/Lord_Howe")
	from := time.Date(2026, 3, 8, 5, 59, 59, 999e6, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := parseCronSpec(expr)
		if err != nil {
			return
		}
		for _, loc := range []*time.Location{newYork, lordHowe} {
			start := time.Now()
			next, err := c.next(from, loc)
			if took := time.Since(start); took > time.Second {
				t.Fatalf("%q: next took %v", expr, took)
			}
			if err == nil && !next.After(from) {
				t.Fatalf("%q: next %v is not after %v", expr, next, from)
			}
		}
	})
}

func cronLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func cronTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v
}
