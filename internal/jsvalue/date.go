package jsvalue

import "math"

// A time value is JavaScript's: a float64 of milliseconds since the epoch,
// NaN for an invalid date. Local time is UTC, as in Novu's server (TZ=UTC)
// and in Herald.

// Milliseconds per unit of time, and the largest time value a Date holds.
const (
	MsPerSecond = 1000.0
	MsPerMinute = 60000.0
	MsPerHour   = 3600000.0
	MsPerDay    = 86400000.0
	MaxTime     = 8.64e15
)

// TimeClip is TimeClip: NaN for a time beyond ±MaxTime (or not finite),
// else the time truncated toward zero.
func TimeClip(t float64) float64 {
	if math.IsNaN(t) || math.IsInf(t, 0) || math.Abs(t) > MaxTime {
		return math.NaN()
	}
	return math.Trunc(t) + 0
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// MakeTime is MakeTime: milliseconds from hours, minutes, seconds and
// milliseconds (each truncated, any may overflow its unit).
func MakeTime(h, m, s, ms float64) float64 {
	if !finite(h) || !finite(m) || !finite(s) || !finite(ms) {
		return math.NaN()
	}
	return math.Trunc(h)*MsPerHour + math.Trunc(m)*MsPerMinute + math.Trunc(s)*MsPerSecond + math.Trunc(ms)
}

// MakeDate is MakeDate: the time value of a day number and a time in it.
func MakeDate(day, time float64) float64 {
	if !finite(day) || !finite(time) {
		return math.NaN()
	}
	return time + day*MsPerDay
}

// MakeDay is MakeDay with V8's bounds: the day number of a year, a month
// (0-based, any may overflow into the year) and a date; NaN for years
// beyond ±1,000,000 or months beyond ±10,000,000.
func MakeDay(year, month, date float64) float64 {
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

// DateFields are the parts of a valid time value that the Date getters
// (getFullYear, getMonth, ... in UTC) read, as float64s ready for MakeDay
// and MakeTime.
type DateFields struct {
	Day                               int64   // days since the epoch (Day(t))
	Year, Month, Date                 float64 // Month is 0..11
	Hour, Minute, Second, Millisecond float64
	TimeWithinDay                     float64 // ms since midnight
}

// SplitDate splits a valid (TimeClipped, not NaN) time value into its
// fields.
func SplitDate(t float64) DateFields {
	ms := int64(t)
	day := floorDiv(ms, MsPerDay)
	tod := ms - day*MsPerDay
	y, m, d := civilFromDays(day)
	return DateFields{
		Day: day, Year: float64(y), Month: float64(m - 1), Date: float64(d),
		Hour: float64(tod / MsPerHour), Minute: float64(tod / MsPerMinute % 60),
		Second: float64(tod / MsPerSecond % 60), Millisecond: float64(tod % 1000), TimeWithinDay: float64(tod),
	}
}
