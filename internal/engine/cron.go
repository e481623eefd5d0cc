package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronSpec is a parsed cron expression as cron-parser 4 (Novu's) reads it:
// five fields (minute hour day-of-month month day-of-week) or six with a
// leading seconds field; `*` and `?`, lists, ranges, `/` steps, month and
// weekday names, day-of-week 0 or 7 for Sunday. When both day fields are
// restricted a day matches either, as in cron.
type cronSpec struct {
	second, minute, hour, dom, month, dow []bool
	domAll, dowAll                        bool
}

var cronNames = map[string]string{
	"jan": "1", "feb": "2", "mar": "3", "apr": "4", "may": "5", "jun": "6", "jul": "7", "aug": "8", "sep": "9",
	"oct": "10", "nov": "11", "dec": "12",
	"sun": "0", "mon": "1", "tue": "2", "wed": "3", "thu": "4", "fri": "5", "sat": "6",
}

// parseCronSpec parses a cron expression.
func parseCronSpec(expr string) (*cronSpec, error) {
	fields := strings.Fields(expr)
	if len(fields) == 5 {
		fields = append([]string{"0"}, fields...)
	}
	if len(fields) != 6 {
		return nil, fmt.Errorf("cron expression %q must have 5 fields (or 6 with seconds)", expr)
	}
	limits := [6][2]int{{0, 59}, {0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}}
	var sets [6][]bool
	for i, f := range fields {
		set, err := cronSet(strings.ToLower(f), limits[i][0], limits[i][1])
		if err != nil {
			return nil, fmt.Errorf("cron expression %q: %w", expr, err)
		}
		sets[i] = set
	}
	if sets[5][7] {
		sets[5][0] = true
	}
	c := &cronSpec{second: sets[0], minute: sets[1], hour: sets[2], dom: sets[3], month: sets[4], dow: sets[5][:7]}
	c.domAll, c.dowAll = all(c.dom[1:]), all(c.dow)
	return c, nil
}

func all(set []bool) bool {
	for _, b := range set {
		if !b {
			return false
		}
	}
	return true
}

// cronSet reads one field into the set of values it selects.
func cronSet(f string, lo, hi int) ([]bool, error) {
	set := make([]bool, hi+1)
	for _, part := range strings.Split(f, ",") {
		rng, stepStr, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n < 1 || n > hi+1 {
				return nil, fmt.Errorf("bad step %q", part)
			}
			step = n
		}
		from, to := lo, hi
		if rng != "*" && rng != "?" {
			a, b, isRange := strings.Cut(rng, "-")
			x, err := cronValue(a)
			if err != nil {
				return nil, fmt.Errorf("bad value %q", part)
			}
			from, to = x, x
			if isRange {
				if to, err = cronValue(b); err != nil {
					return nil, fmt.Errorf("bad range %q", part)
				}
			} else if hasStep {
				to = hi
			}
		}
		if from < lo || to > hi || from > to {
			return nil, fmt.Errorf("%q is out of range %d-%d", part, lo, hi)
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	return set, nil
}

func cronValue(s string) (int, error) {
	if n, ok := cronNames[s]; ok {
		s = n
	}
	return strconv.Atoi(s)
}

// dayMatches says whether the expression selects a day.
func (c *cronSpec) dayMatches(t time.Time) bool {
	if !c.month[int(t.Month())] {
		return false
	}
	dom, dow := c.dom[t.Day()], c.dow[int(t.Weekday())]
	switch {
	case c.domAll && c.dowAll:
		return true
	case c.domAll:
		return dow
	case c.dowAll:
		return dom
	}
	return dom || dow
}

// cronHorizon is how far ahead next looks (a 29 February needs four years).
const cronHorizon = 5 * 366

// next is the first instant strictly after from, in loc, that the
// expression selects.
func (c *cronSpec) next(from time.Time, loc *time.Location) (time.Time, error) {
	from = from.In(loc)
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, loc)
	for i := 0; i < cronHorizon; i++ {
		d := day.AddDate(0, 0, i)
		if !c.dayMatches(d) {
			continue
		}
		for h := 0; h < 24; h++ {
			if !c.hour[h] {
				continue
			}
			for m := 0; m < 60; m++ {
				if !c.minute[m] {
					continue
				}
				for s := 0; s < 60; s++ {
					if !c.second[s] {
						continue
					}
					t := time.Date(d.Year(), d.Month(), d.Day(), h, m, s, 0, loc)
					if t.After(from) && t.Day() == d.Day() && t.Hour() == h {
						return t, nil
					}
				}
			}
		}
	}
	return time.Time{}, fmt.Errorf("the cron expression selects no time in the next %d days", cronHorizon)
}

// nextCron is the next instant after from that a cron expression selects,
// in loc.
func nextCron(expr string, from time.Time, loc *time.Location) (time.Time, error) {
	c, err := parseCronSpec(expr)
	if err != nil {
		return time.Time{}, err
	}
	return c.next(from, loc)
}

// CheckCron says why a cron expression cannot be used ("" when it can): it
// does not parse, or selects no time.
func CheckCron(expr string) string {
	c, err := parseCronSpec(expr)
	if err == nil {
		_, err = c.next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
