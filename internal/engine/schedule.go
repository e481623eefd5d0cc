package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// addUnit adds amount units (seconds … months) to t.
func addUnit(t time.Time, amount float64, unit string) (time.Time, error) {
	if amount < 0 || amount > 1e6 {
		return t, fmt.Errorf("amount %v is out of range", amount)
	}
	switch unit {
	case "seconds":
		return t.Add(time.Duration(amount * float64(time.Second))), nil
	case "minutes":
		return t.Add(time.Duration(amount * float64(time.Minute))), nil
	case "hours":
		return t.Add(time.Duration(amount * float64(time.Hour))), nil
	case "days":
		return t.Add(time.Duration(amount * 24 * float64(time.Hour))), nil
	case "weeks":
		return t.Add(time.Duration(amount * 7 * 24 * float64(time.Hour))), nil
	case "months":
		return t.AddDate(0, int(amount), 0), nil
	}
	return t, fmt.Errorf("unit %q is not one of seconds, minutes, hours, days, weeks, months", unit)
}

// timedConfig is a timed digest's schedule (OpenAPI TimedConfig).
type timedConfig struct {
	AtTime         string   `json:"atTime"`
	WeekDays       []string `json:"weekDays"`
	MonthDays      []any    `json:"monthDays"`
	Ordinal        string   `json:"ordinal"`
	OrdinalValue   string   `json:"ordinalValue"`
	MonthlyType    string   `json:"monthlyType"`
	CronExpression string   `json:"cronExpression"`
}

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// nextTimed is the first minute after now, in loc, that the schedule
// selects. It looks at most 400 days ahead.
func nextTimed(now time.Time, loc *time.Location, unit string, amount float64, c timedConfig) (time.Time, error) {
	if c.CronExpression != "" {
		return nextCron(c.CronExpression, now, loc)
	}
	match, err := c.matcher(unit, amount)
	if err != nil {
		return time.Time{}, err
	}
	t := now.In(loc).Truncate(time.Minute).Add(time.Minute)
	for end := t.AddDate(0, 0, 400); t.Before(end); t = t.Add(time.Minute) {
		if match(t) {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("the schedule selects no time in the next 400 days")
}

func (c timedConfig) matcher(unit string, amount float64) (func(time.Time) bool, error) {
	hour, minute := 0, 0
	if c.AtTime != "" {
		at, err := time.Parse("15:04", c.AtTime)
		if err != nil {
			return nil, fmt.Errorf("atTime %q is not HH:MM", c.AtTime)
		}
		hour, minute = at.Hour(), at.Minute()
	}
	atTime := func(t time.Time) bool { return t.Hour() == hour && t.Minute() == minute }
	every := max(int(amount), 1)
	switch unit {
	case "minutes":
		return func(t time.Time) bool { return (t.Hour()*60+t.Minute())%every == 0 }, nil
	case "hours":
		return func(t time.Time) bool { return t.Minute() == minute && t.Hour()%every == 0 }, nil
	case "days", "":
		return atTime, nil
	case "weeks":
		days := map[time.Weekday]bool{}
		for _, d := range c.WeekDays {
			wd, ok := weekdays[d]
			if !ok {
				return nil, fmt.Errorf("weekDays: %q is not a weekday", d)
			}
			days[wd] = true
		}
		return func(t time.Time) bool { return atTime(t) && (len(days) == 0 || days[t.Weekday()]) }, nil
	case "months":
		if c.MonthlyType == "on" && c.Ordinal != "" {
			return ordinalMatcher(c.Ordinal, c.OrdinalValue, atTime)
		}
		days := map[int]bool{}
		for _, d := range c.MonthDays {
			n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(d)))
			if err != nil || n < 1 || n > 31 {
				return nil, fmt.Errorf("monthDays: %v is not a day of the month", d)
			}
			days[n] = true
		}
		if len(days) == 0 {
			days[1] = true
		}
		return func(t time.Time) bool { return atTime(t) && days[t.Day()] }, nil
	}
	return nil, fmt.Errorf("unit %q cannot be timed", unit)
}

// ordinalMatcher selects e.g. the last friday, or the 2nd weekday, of each month.
func ordinalMatcher(ordinal, value string, atTime func(time.Time) bool) (func(time.Time) bool, error) {
	isDay := func(t time.Time) bool {
		switch value {
		case "day", "":
			return true
		case "weekday":
			return t.Weekday() != time.Saturday && t.Weekday() != time.Sunday
		case "weekend":
			return t.Weekday() == time.Saturday || t.Weekday() == time.Sunday
		}
		return t.Weekday() == weekdays[value]
	}
	if _, ok := weekdays[value]; !ok && value != "day" && value != "weekday" && value != "weekend" && value != "" {
		return nil, fmt.Errorf("ordinalValue %q is not valid", value)
	}
	nth := 0
	if ordinal != "last" {
		n, err := strconv.Atoi(ordinal)
		if err != nil || n < 1 || n > 5 {
			return nil, fmt.Errorf("ordinal %q is not 1-5 or last", ordinal)
		}
		nth = n
	}
	return func(t time.Time) bool {
		if !atTime(t) || !isDay(t) {
			return false
		}
		if nth == 0 { // last: no later matching day this month
			for d := t.AddDate(0, 0, 1); d.Month() == t.Month(); d = d.AddDate(0, 0, 1) {
				if isDay(d) {
					return false
				}
			}
			return true
		}
		count := 0
		for d := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location()); d.Day() <= t.Day() && d.Month() == t.Month(); d = d.AddDate(0, 0, 1) {
			if isDay(d) {
				count++
			}
		}
		return count == nth
	}, nil
}
