package engine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// Cron expressions of timed digests and timed delays (controlValues.cron), as
// Novu computes them: with cron-parser 4.9.0, parseExpression(cron,
// {currentDate, tz}).next(), over luxon 3.3.0. Both the syntax and the search
// are transcribed from those sources, quirks included, because a schedule
// must fire at the instant Novu's would; clients/cron-oracle runs the real
// library and crondiff_test.go compares the two.
//
// The syntax: one to six fields split on JavaScript white space, the missing
// leading ones defaulted from "0 * * * * *" (so five fields are minute to
// day-of-week and "" is every minute); `*` and `?`; lists, ranges and `/`
// steps; month and weekday names; day-of-week 7 for Sunday; `L` (last day of
// the month; `5L` the month's last Friday) and `#` (`1#2`, its second
// Monday).
//
// The search walks from the start instant in the subscriber's zone one day,
// month, hour, minute or second at a time, each step the way cron-parser
// steps a luxon DateTime, and gives up after cronLoopLimit steps — what
// bounds it (an expression that selects no time fails in a few
// milliseconds).

// cronLoopLimit is cron-parser's LOOP_LIMIT: the steps next takes before it
// gives up. A day that does not match costs one step and a month one, so it
// reaches past the eight years between two 29 Februaries.
const cronLoopLimit = 10000

// cronField is one field of an expression: the numbers it selects and how
// many values cron-parser keeps for it, duplicates and L atoms included —
// cron-parser decides whether a day field is a wildcard by that count.
type cronField struct {
	has   [60]bool
	count int
}

func (f *cronField) match(v int) bool { return v >= 0 && v < len(f.has) && f.has[v] }

// cronSpec is a parsed cron expression.
type cronSpec struct {
	second, minute, hour, dom, month, dow cronField
	// domLast: day-of-month has an L atom (the month's last day).
	domLast bool
	// lastWeekday[d]: day-of-week has an atom "dL…" (the month's last
	// weekday d). A weekday L atom cron-parser cannot read ("L", "?L") makes
	// next fail when it is tried: lastBadFirst ones before the others,
	// lastBadAfter ones after (cron-parser tries them in collation order).
	lastWeekday                [7]bool
	hasLast                    bool
	lastBadFirst, lastBadAfter bool
	// nth is the occurrence of `#` (0: none); cron-parser accepts any
	// number from 1 to 5, and one that is not whole selects no day.
	nth float64
}

// cronAtom is one value of a field as cron-parser's parser returns it: a
// number, or a string holding L.
type cronAtom struct {
	n     int
	s     string
	isStr bool
}

// cronFieldDef is how cron-parser reads one field.
type cronFieldDef struct {
	name     string
	min, max int
	extra    string // characters allowed beside digits and ",*/-"
	aliases  map[string]int
	lastChar bool // L atoms are values
	weekday  bool // day-of-week: 7 is Sunday
}

var cronFieldDefs = [6]cronFieldDef{
	{name: "second", min: 0, max: 59},
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31, extra: "?L", lastChar: true},
	{name: "month", min: 1, max: 12, aliases: map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5,
		"jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}},
	{name: "day of week", min: 0, max: 7, extra: "?L#", lastChar: true, weekday: true,
		aliases: map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}},
}

// cronDefaults are the values of absent leading fields.
var cronDefaults = [6]string{"0", "*", "*", "*", "*", "*"}

// cronPredefined are the names cron-parser replaces (matched exactly).
var cronPredefined = map[string]string{
	"@yearly": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
	"@daily": "0 0 * * *", "@hourly": "0 * * * *",
}

// cronMonthDays is cron-parser's days-in-month table (February 29).
var cronMonthDays = [12]int{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// parseCronSpec parses a cron expression as cron-parser's parseExpression
// does, refusing what it refuses.
func parseCronSpec(expr string) (*cronSpec, error) {
	if p, ok := cronPredefined[expr]; ok {
		expr = p
	}
	atoms := strings.FieldsFunc(expr, jsvalue.IsSpace)
	if len(atoms) == 0 {
		atoms = []string{""}
	}
	if len(atoms) > 6 {
		return nil, fmt.Errorf("cron expression %q has more than 6 fields", expr)
	}
	var nth float64
	var fields [6][]cronAtom
	start := 6 - len(atoms)
	for i, def := range cronFieldDefs {
		value := cronDefaults[i]
		if i >= start && atoms[i-start] != "" {
			value = atoms[i-start]
			if def.weekday {
				var err error
				if value, nth, err = cronNthDay(value); err != nil {
					return nil, fmt.Errorf("cron expression %q: %w", expr, err)
				}
			}
		}
		f, err := def.parse(value)
		if err != nil {
			return nil, fmt.Errorf("cron expression %q: %s: %w", expr, def.name, err)
		}
		fields[i] = f
	}
	dom, err := cronMonthDayFilter(fields[3], fields[4])
	if err != nil {
		return nil, fmt.Errorf("cron expression %q: %w", expr, err)
	}
	c := &cronSpec{nth: nth}
	for i, f := range []*cronField{&c.second, &c.minute, &c.hour, &c.dom, &c.month, &c.dow} {
		atoms := fields[i]
		if i == 3 {
			atoms = dom
		}
		f.count = len(atoms)
		for _, a := range atoms {
			switch {
			case !a.isStr:
				f.has[a.n] = true
			case i == 3:
				c.domLast = true
			default:
				c.hasLast = true
				switch b := a.s[0]; {
				case b >= '0' && b <= '9':
					c.lastWeekday[int(b-'0')%7] = true
				case b == '?': // punctuation: collated before digits
					c.lastBadFirst = true
				default: // L: collated after digits
					c.lastBadAfter = true
				}
			}
		}
	}
	return c, nil
}

// cronNthDay splits "d#n" (the n-th weekday d of the month) as cron-parser's
// parseNthDay does, n read as a JavaScript number.
func cronNthDay(value string) (string, float64, error) {
	parts := strings.Split(value, "#")
	if len(parts) == 1 {
		return value, 0, nil
	}
	if strings.ContainsAny(value, ",/-") {
		return "", 0, fmt.Errorf("# cannot be combined with , / or -")
	}
	n := jsvalue.StringToNumber(parts[len(parts)-1])
	if len(parts) > 2 || math.IsNaN(n) || n < 1 || n > 5 {
		return "", 0, fmt.Errorf("the occurrence after # must be 1 to 5")
	}
	return parts[0], n, nil
}

// cronMonthDayFilter applies cron-parser's _handleMaxDaysInMonth: with a
// single month, a smallest day past that month's length is an error and
// the other days past it (and L atoms other than "L") are dropped.
func cronMonthDayFilter(dom, month []cronAtom) ([]cronAtom, error) {
	if len(month) != 1 {
		return dom, nil
	}
	days := cronMonthDays[month[0].n-1]
	smallest := -1
	for _, a := range dom {
		if !a.isStr && (smallest < 0 || a.n < smallest) {
			smallest = a.n
		}
	}
	if smallest > days {
		return nil, fmt.Errorf("day of month %d does not exist in month %d", smallest, month[0].n)
	}
	kept := make([]cronAtom, 0, len(dom))
	for _, a := range dom {
		if (a.isStr && a.s == "L") || (!a.isStr && a.n <= days) {
			kept = append(kept, a)
		}
	}
	return kept, nil
}

// parse reads one field as cron-parser's _parseField does.
func (d *cronFieldDef) parse(value string) ([]cronAtom, error) {
	if d.aliases != nil {
		var err error
		if value, err = d.replaceAliases(value); err != nil {
			return nil, err
		}
	}
	if value == "" || strings.IndexFunc(value, func(r rune) bool {
		return (r < '0' || r > '9') && !strings.ContainsRune(",*/-"+d.extra, r)
	}) >= 0 {
		return nil, fmt.Errorf("invalid characters in %q", value)
	}
	full := strconv.Itoa(d.min) + "-" + strconv.Itoa(d.max)
	if strings.Contains(value, "*") {
		value = strings.ReplaceAll(value, "*", full)
	} else {
		value = strings.ReplaceAll(value, "?", full)
	}
	var out []cronAtom
	for _, part := range strings.Split(value, ",") {
		if part == "" {
			return nil, errors.New("empty list value")
		}
		atoms, err := d.repeat(part)
		if err != nil {
			return nil, err
		}
		out = append(out, atoms...)
	}
	return out, nil
}

// replaceAliases replaces every run of three ASCII letters, as cron-parser
// does with /[a-z]{3}/gi; one that names no month (weekday) is an error.
func (d *cronFieldDef) replaceAliases(v string) (string, error) {
	letter := func(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }
	var b strings.Builder
	for i := 0; i < len(v); {
		if i+3 <= len(v) && letter(v[i]) && letter(v[i+1]) && letter(v[i+2]) {
			n, ok := d.aliases[strings.ToLower(v[i:i+3])]
			if !ok {
				return "", fmt.Errorf("unknown name %q", v[i:i+3])
			}
			b.WriteString(strconv.Itoa(n))
			i += 3
			continue
		}
		b.WriteByte(v[i])
		i++
	}
	return b.String(), nil
}

// repeat reads one list element: "a-b/s", "n/s" (n to the maximum), "a-b"
// or a value.
func (d *cronFieldDef) repeat(part string) ([]cronAtom, error) {
	parts := strings.Split(part, "/")
	switch {
	case len(parts) > 2:
		return nil, fmt.Errorf("invalid repeat %q", part)
	case len(parts) == 2:
		if !math.IsNaN(jsvalue.StringToNumber(parts[0])) {
			parts[0] += "-" + strconv.Itoa(d.max)
		}
		return d.rangeOf(parts[0], parts[1])
	}
	return d.rangeOf(part, "1")
}

// rangeOf reads "a-b" (a third bound is ignored, as cron-parser does) with
// a step, or a single value, checking each against the field's bounds.
func (d *cronFieldDef) rangeOf(val, step string) ([]cronAtom, error) {
	bounds := strings.Split(val, "-")
	if len(bounds) == 1 || bounds[0] == "" {
		if len(bounds) > 1 && bounds[1] == "" {
			return nil, fmt.Errorf("invalid range %q", val)
		}
		// A value ("-0" reads as 0, like any JavaScript number).
		n := jsvalue.StringToNumber(val)
		if len(bounds) == 1 && math.IsNaN(n) && d.lastChar && strings.Contains(val, "L") {
			return []cronAtom{{s: val, isStr: true}}, nil
		}
		if math.IsNaN(n) || n < float64(d.min) || n > float64(d.max) {
			return nil, fmt.Errorf("value %q is out of range %d-%d", val, d.min, d.max)
		}
		v := int(n)
		if d.weekday {
			v %= 7
		}
		return []cronAtom{{n: v}}, nil
	}
	lo, hi := jsvalue.StringToNumber(bounds[0]), jsvalue.StringToNumber(bounds[1])
	if math.IsNaN(lo) || math.IsNaN(hi) || lo < float64(d.min) || hi > float64(d.max) {
		return nil, fmt.Errorf("range %q is out of range %d-%d", val, d.min, d.max)
	}
	if lo > hi {
		return nil, fmt.Errorf("invalid range %q", val)
	}
	every := jsvalue.StringToNumber(step)
	if math.IsNaN(every) || every <= 0 {
		return nil, fmt.Errorf("invalid step %q", step)
	}
	var out []cronAtom
	var seen [60]bool
	if d.weekday && int(hi)%7 == 0 { // a range to 7 also selects 0
		out, seen[0] = append(out, cronAtom{n: 0}), true
	}
	// cron-parser counts from the step itself, so the first value is kept,
	// and a value already present still advances the count.
	count := every
	for v := int(lo); v <= int(hi); v++ {
		if !seen[v] && math.Mod(count, every) == 0 {
			count, seen[v] = 1, true
			out = append(out, cronAtom{n: v})
		} else {
			count++
		}
	}
	return out, nil
}

// next is the first instant strictly after from (taken to the millisecond)
// that the expression selects in loc, found as cron-parser's _findSchedule
// finds it: test the day (the OR rule below), the month, the hour, the
// minute, the second, and step the first that fails — to the start of the
// next day, month, hour, minute or second — until all match.
//
// Day of month and day of week: a field counts as a wildcard when it holds
// as many values as the month has days (the day of month, February counted
// as 29) or 8 values (day of week, as "*" reads: 0-7); with both restricted
// a day matches either. With `#`, the day must also be that occurrence of
// its weekday in the month.
//
// Daylight saving time, as cron-parser over luxon does it. A local time
// that a whole-hour DST start skips is taken at the same minute of the hour
// after (a daily "30 2 * * *" fires at 03:30 the day New York springs
// forward); one that other starts skip may be passed for the day (Lord
// Howe's 02:00, Santiago's midnight). A local time that occurs twice fires
// once, at its first instant, when a whole hour repeats (New York's 01:30),
// and twice when half an hour does (Lord Howe's 01:45).
func (c *cronSpec) next(from time.Time, loc *time.Location) (time.Time, error) {
	z := luxonClock{loc}
	ts := from.UnixMilli()
	start := ts
	// The hour a step jumped to across a DST start, or back to at a DST
	// end, while the hour field is restricted (-1: none).
	dstStart, dstEnd := -1, -1
	shift := func(step func(int64) int64) { // _applyTimezoneShift
		before := z.local(ts).Hour()
		ts = step(ts)
		t := z.local(ts)
		switch diff := t.Hour() - before; {
		case c.hour.count == 24:
		case diff == 2:
			dstStart = t.Hour()
		case diff == 0 && t.Minute() == 0 && t.Second() == 0:
			dstEnd = t.Hour()
		}
	}
	// cron-parser gives up when its step count reaches the limit, even on
	// the step that matched.
	for steps := 1; steps < cronLoopLimit; steps++ {
		t := z.local(ts)
		domMatch := c.dom.match(t.Day()) || (c.domLast && z.isLastDayOfMonth(ts))
		dowMatch := c.dow.match(int(t.Weekday()))
		if !dowMatch && c.hasLast {
			m, err := c.lastWeekdayMatch(z, ts)
			if err != nil {
				return time.Time{}, err
			}
			dowMatch = m
		}
		domAll := c.dom.count >= cronMonthDays[t.Month()-1]
		dowAll := c.dow.count == 8
		if !domMatch && (!dowMatch || dowAll) || domAll && !dowAll && !dowMatch ||
			c.nth > 0 && !cronNthMatch(t.Day(), c.nth) {
			ts = z.addDay(ts)
			continue
		}
		if !c.month.match(int(t.Month())) {
			ts = z.addMonth(ts)
			continue
		}
		hour := t.Hour()
		if !c.hour.match(hour) {
			if dstStart != hour {
				dstStart = -1
				shift(z.addHour)
				continue
			}
			if !c.hour.match(hour - 1) {
				ts = z.addHour(ts)
				continue
			}
		} else if dstEnd == hour {
			dstEnd = -1
			shift(z.addHour)
			continue
		}
		if !c.minute.match(t.Minute()) {
			shift(z.addMinute)
			continue
		}
		if !c.second.match(t.Second()) || ts == start {
			shift(z.addSecond)
			continue
		}
		return time.UnixMilli(ts).In(loc), nil
	}
	return time.Time{}, errCronUnreachable
}

// errCronUnreachable is next's error when the search gives up.
var errCronUnreachable = fmt.Errorf("the cron expression selects no time that cron-parser reaches in %d steps", cronLoopLimit)

// lastWeekdayMatch says whether ts is on the month's last weekday that an
// L atom of day-of-week names, failing as cron-parser does when it tries
// an atom without a weekday digit.
func (c *cronSpec) lastWeekdayMatch(z luxonClock, ts int64) (bool, error) {
	bad := errors.New("the cron expression has a last weekday (L) without a weekday")
	if c.lastBadFirst {
		return false, bad
	}
	if c.lastWeekday[z.local(ts).Weekday()] && z.isLastWeekdayOfMonth(ts) {
		return true, nil
	}
	if c.lastBadAfter {
		return false, bad
	}
	return false, nil
}

// cronNthMatch says whether a day of the month is the nth occurrence of its
// weekday.
func cronNthMatch(day int, nth float64) bool {
	occurrence := day / 7
	if day%7 != 0 {
		occurrence++
	}
	return day < 8 && nth == 1 || float64(occurrence) == nth
}

// luxonClock steps instants (Unix milliseconds) in a zone as luxon 3.3.0's
// DateTime does under cron-parser's CronDate: calendar arithmetic on the
// local fields, then fixOffset to find their instant.
type luxonClock struct{ loc *time.Location }

func (z luxonClock) local(ts int64) time.Time { return time.UnixMilli(ts).In(z.loc) }

func (z luxonClock) offset(ts int64) int64 {
	_, off := z.local(ts).Zone()
	return int64(off) * 1000
}

// fixOffset is luxon's: the instant of a local time (localTS, its fields
// read as UTC) guessing the offset o first. An ambiguous local time keeps
// the guess when the guess fits it; one in a gap moves forward by the gap.
func (z luxonClock) fixOffset(localTS, o int64) int64 {
	guess := localTS - o
	o2 := z.offset(guess)
	if o2 == o {
		return guess
	}
	guess -= o2 - o
	o3 := z.offset(guess)
	if o3 == o2 {
		return guess
	}
	return localTS - min(o2, o3)
}

// at is the instant of the local fields (normalised as Date.UTC does),
// guessing ts's offset.
func (z luxonClock) at(ts int64, y int, mo time.Month, d, h, mi, s, ms int) int64 {
	return z.fixOffset(time.Date(y, mo, d, h, mi, s, ms*1e6, time.UTC).UnixMilli(), z.offset(ts))
}

// plusDays is DateTime.plus({days: n}).
func (z luxonClock) plusDays(ts int64, n int) int64 {
	t := z.local(ts)
	return z.at(ts, t.Year(), t.Month(), t.Day()+n, t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1e6)
}

// startOf is DateTime.startOf(unit) for "day", "hour", "minute" and
// "second".
func (z luxonClock) startOf(ts int64, unit time.Duration) int64 {
	t := z.local(ts)
	h, mi, s := t.Hour(), t.Minute(), t.Second()
	switch unit {
	case 24 * time.Hour:
		h, mi, s = 0, 0, 0
	case time.Hour:
		mi, s = 0, 0
	case time.Minute:
		s = 0
	}
	return z.at(ts, t.Year(), t.Month(), t.Day(), h, mi, s, 0)
}

// addDay and the others are CronDate's: the start of the next unit; the
// start of the next hour, minute or second is one hour later when a DST end
// would take it back. (cron-parser also mends a day or month step that
// lands on the same instant; in the IANA zones such a step always moves.)
func (z luxonClock) addDay(ts int64) int64 { return z.startOf(z.plusDays(ts, 1), 24*time.Hour) }

func (z luxonClock) addMonth(ts int64) int64 {
	t := z.local(ts)
	mo := t.Month() + 1
	days := time.Date(t.Year(), mo+1, 0, 0, 0, 0, 0, time.UTC).Day()
	ts = z.at(ts, t.Year(), mo, min(t.Day(), days), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1e6)
	t = z.local(ts)
	return z.at(ts, t.Year(), t.Month(), 1, 0, 0, 0, 0)
}

func (z luxonClock) addHour(ts int64) int64 {
	next := z.startOf(ts+time.Hour.Milliseconds(), time.Hour)
	if next <= ts {
		next += time.Hour.Milliseconds()
	}
	return next
}

func (z luxonClock) addMinute(ts int64) int64 {
	next := z.startOf(ts+time.Minute.Milliseconds(), time.Minute)
	if next < ts {
		next += time.Hour.Milliseconds()
	}
	return next
}

func (z luxonClock) addSecond(ts int64) int64 {
	next := z.startOf(ts+time.Second.Milliseconds(), time.Second)
	if next < ts {
		next += time.Hour.Milliseconds()
	}
	return next
}

// isLastDayOfMonth and isLastWeekdayOfMonth are CronDate's: whether the
// start of the day 1 (7) days later is in another month.
func (z luxonClock) isLastDayOfMonth(ts int64) bool {
	return z.local(z.startOf(z.plusDays(ts, 1), 24*time.Hour)).Month() != z.local(ts).Month()
}

func (z luxonClock) isLastWeekdayOfMonth(ts int64) bool {
	return z.local(z.startOf(z.plusDays(ts, 7), 24*time.Hour)).Month() != z.local(ts).Month()
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

// cronCheckFrom is the instant CheckCron searches from.
var cronCheckFrom = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// CheckCron says why a cron expression cannot be used ("" when it can):
// cron-parser refuses to parse it, or fails to find its next time from
// 2026-01-01 in UTC (it selects no time, or names a last weekday without
// its weekday).
func CheckCron(expr string) string {
	_, err := nextCron(expr, cronCheckFrom, time.UTC)
	if err != nil {
		return err.Error()
	}
	return ""
}
