package jsonlogic

import "math"

// JavaScript dates as V8 (Node.js) computes them, in UTC: Novu's server runs
// with TZ=UTC, so its local time is UTC, and so is Herald's. A time value is
// a float64 of milliseconds since the epoch, NaN for an invalid date.

const (
	msPerDay    = 86400000.0
	msPerHour   = 3600000.0
	msPerMinute = 60000.0
	msPerSecond = 1000.0
	maxTime     = 8.64e15
)

// timeClip is TimeClip.
func timeClip(t float64) float64 {
	if math.IsNaN(t) || math.IsInf(t, 0) || math.Abs(t) > maxTime {
		return math.NaN()
	}
	return math.Trunc(t) + 0
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// makeTime is MakeTime.
func makeTime(h, m, s, ms float64) float64 {
	if !finite(h) || !finite(m) || !finite(s) || !finite(ms) {
		return math.NaN()
	}
	return math.Trunc(h)*msPerHour + math.Trunc(m)*msPerMinute + math.Trunc(s)*msPerSecond + math.Trunc(ms)
}

// makeDate is MakeDate.
func makeDate(day, time float64) float64 {
	if !finite(day) || !finite(time) {
		return math.NaN()
	}
	return time + day*msPerDay
}

// makeDay is MakeDay with V8's bounds (years within ±1,000,000, months
// within ±10,000,000, else NaN).
func makeDay(year, month, date float64) float64 {
	if !(year >= -1e6 && year <= 1e6) || !(month >= -1e7 && month <= 1e7) || !finite(date) {
		return math.NaN()
	}
	y, m := int64(year), int64(month)
	y += m / 12
	m %= 12
	if m < 0 {
		m += 12
		y--
	}
	return float64(daysFromCivil(y, m+1, 1)-1) + math.Trunc(date)
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (m 1..12).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// fields splits a valid time value into its day number and the parts of
// its day, as the Date getters see them.
type fields struct {
	day                     int64
	year, month, date       float64 // month 0..11
	hour, min, sec, ms, tod float64
}

func splitTime(t float64) fields {
	ms := int64(t)
	day := floorDiv(ms, msPerDay)
	tod := ms - day*msPerDay
	y, m, d := civilFromDays(day)
	return fields{
		day: day, year: float64(y), month: float64(m - 1), date: float64(d),
		hour: float64(tod / msPerHour), min: float64(tod / msPerMinute % 60),
		sec: float64(tod / msPerSecond % 60), ms: float64(tod % 1000), tod: float64(tod),
	}
}

// relativeDate is Novu's calculateRelativeDate: now moved back by amount
// units with the Date setters (setMinutes(getMinutes() - amount) ...), which
// truncate the fractional part of the new field, not of amount.
func relativeDate(now, amount float64, unit string) float64 {
	f := splitTime(now)
	var t float64
	switch unit {
	case "minutes":
		t = makeDate(float64(f.day), makeTime(f.hour, f.min-amount, f.sec, f.ms))
	case "hours":
		t = makeDate(float64(f.day), makeTime(f.hour-amount, f.min, f.sec, f.ms))
	case "weeks":
		t = makeDate(makeDay(f.year, f.month, f.date-amount*7), f.tod)
	case "months":
		t = makeDate(makeDay(f.year, f.month-amount, f.date), f.tod)
	case "years":
		t = makeDate(makeDay(f.year-amount, f.month, f.date), f.tod)
	default: // "days", and Novu's fallback
		t = makeDate(makeDay(f.year, f.month, f.date-amount), f.tod)
	}
	return timeClip(t)
}

// newDate is the time value of JavaScript's new Date(v): a string is parsed
// (parseDate), anything else is converted to a number of milliseconds
// (null is the epoch, an array is read as its string).
func (e *evaluator) newDate(v any) float64 {
	switch x := norm(v).(type) {
	case string:
		e.chargeLen(x)
		return parseDate(x)
	case []any:
		return parseDate(e.join(x, ","))
	case map[string]any:
		return parseDate(objectToString(x))
	case float64, bool, nil, undefinedType:
		return timeClip(e.toNumber(x))
	}
	return parseDate("[object Object]")
}
