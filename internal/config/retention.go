package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultRetention is what Herald keeps when no retention setting is given.
var DefaultRetention = Retention{Activity: 30 * day, Inbox: 365 * day, Interval: time.Hour}

const day = 24 * time.Hour

// RetentionSettings are the retention settings as given by flags or the
// environment: Go durations ("90s", "12h") or days ("30d", "1.5d"); "0"
// keeps forever; "" is the default.
type RetentionSettings struct {
	Activity string // --retention-activity, HERALD_RETENTION_ACTIVITY
	Inbox    string // --retention-inbox, HERALD_RETENTION_INBOX
	Interval string // --retention-interval, HERALD_RETENTION_INTERVAL
}

// Retention is how long Herald keeps what it stores (docs/operations.md,
// "Retention").
type Retention struct {
	// Activity is how long triggers (notifications), their jobs, execution
	// details and non-in-app messages, and transactionId reservations are
	// kept once finished; 0 keeps them forever.
	Activity time.Duration
	// Inbox is how long in-app messages are kept; 0 keeps them forever.
	Inbox time.Duration
	// Interval is how often the purge runs (> 0).
	Interval time.Duration
}

// Parse reads the settings; an invalid or negative value, or an interval
// that is not positive, is an error naming the setting.
func (s RetentionSettings) Parse() (Retention, error) {
	r := DefaultRetention
	for _, f := range []struct {
		in, name, flag string
		out            *time.Duration
		positive       bool
	}{
		{s.Activity, "HERALD_RETENTION_ACTIVITY", "--retention-activity", &r.Activity, false},
		{s.Inbox, "HERALD_RETENTION_INBOX", "--retention-inbox", &r.Inbox, false},
		{s.Interval, "HERALD_RETENTION_INTERVAL", "--retention-interval", &r.Interval, true},
	} {
		if f.in == "" {
			continue
		}
		d, err := ParseRetention(f.in)
		if err == nil && f.positive && d == 0 {
			err = fmt.Errorf("must be more than 0")
		}
		if err != nil {
			return Retention{}, fmt.Errorf("config: %s (%s): %w", f.name, f.flag, err)
		}
		*f.out = d
	}
	return r, nil
}

// ParseRetention reads a retention period: a Go duration ("90s", "12h",
// "0") or a number of days with a "d" suffix ("30d", "1.5d"). A negative
// value is an error.
func ParseRetention(v string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		// A plain decimal number (no hexadecimal, Inf or NaN), within a
		// time.Duration's range (about 290 years).
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || strings.ContainsAny(days, "xXpPiInN_") || n > 100_000 || n < -100_000 {
			return 0, fmt.Errorf("%q is not a duration (such as 90s, 12h) or a number of days (such as 30d, 1.5d)", v)
		}
		d = time.Duration(n * float64(day))
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("%q is not a duration (such as 90s, 12h) or a number of days (such as 30d, 1.5d)", v)
		}
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", v)
	}
	return d, nil
}
