package jsonlogic

import "github.com/herald-notify/herald/internal/jsvalue"

// Dates as Novu's operations read them: time values (jsvalue's) in UTC.

// relativeDate is Novu's calculateRelativeDate: now moved back by amount
// units with the Date setters (setMinutes(getMinutes() - amount) ...), which
// truncate the fractional part of the new field, not of amount.
func relativeDate(now, amount float64, unit string) float64 {
	f := jsvalue.SplitDate(now)
	var t float64
	switch unit {
	case "minutes":
		t = jsvalue.MakeDate(float64(f.Day), jsvalue.MakeTime(f.Hour, f.Minute-amount, f.Second, f.Millisecond))
	case "hours":
		t = jsvalue.MakeDate(float64(f.Day), jsvalue.MakeTime(f.Hour-amount, f.Minute, f.Second, f.Millisecond))
	case "weeks":
		t = jsvalue.MakeDate(jsvalue.MakeDay(f.Year, f.Month, f.Date-amount*7), f.TimeWithinDay)
	case "months":
		t = jsvalue.MakeDate(jsvalue.MakeDay(f.Year, f.Month-amount, f.Date), f.TimeWithinDay)
	case "years":
		t = jsvalue.MakeDate(jsvalue.MakeDay(f.Year-amount, f.Month, f.Date), f.TimeWithinDay)
	default: // "days", and Novu's fallback
		t = jsvalue.MakeDate(jsvalue.MakeDay(f.Year, f.Month, f.Date-amount), f.TimeWithinDay)
	}
	return jsvalue.TimeClip(t)
}

// newDate is the time value of JavaScript's new Date(v): a string is parsed
// (jsvalue.ParseDate), anything else is converted to a number of milliseconds
// (null is the epoch, an array is read as its string).
func (e *evaluator) newDate(v any) float64 {
	switch x := norm(v).(type) {
	case string:
		e.chargeLen(x)
		return jsvalue.ParseDate(x)
	case []any:
		return jsvalue.ParseDate(e.join(x, ","))
	case map[string]any:
		return jsvalue.ParseDate(objectToString(x))
	case float64, bool, nil, undefinedType:
		return jsvalue.TimeClip(e.toNumber(x))
	}
	return jsvalue.ParseDate("[object Object]")
}
