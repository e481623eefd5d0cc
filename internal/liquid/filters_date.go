package liquid

// LiquidJS's date filters: parseDate (numbers are seconds, strings parse
// as V8's Date does, in a process whose time zone is UTC), LiquidDate
// (a display time zone: an offset in minutes or an IANA name) and strftime.

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/jsvalue"
)

func init() {
	register("date", filterDate)
	register("date_to_xmlschema", func(c *Context, v any, args []any) (any, error) {
		return fDateFormat(c, v, "%Y-%m-%dT%H:%M:%S%:z", nil)
	})
	register("date_to_rfc822", func(c *Context, v any, args []any) (any, error) {
		return fDateFormat(c, v, "%a, %d %b %Y %H:%M:%S %z", nil)
	})
	register("date_to_string", func(c *Context, v any, args []any) (any, error) {
		return fStringifyDate(c, v, "%b", fArg(args, 0), fArg(args, 1))
	})
	register("date_to_long_string", func(c *Context, v any, args []any) (any, error) {
		return fStringifyDate(c, v, "%B", fArg(args, 0), fArg(args, 1))
	})
}

// fDefaultDateFormat is LiquidJS's dateFormat option.
const fDefaultDateFormat = "%A, %B %-e, %Y at %-l:%M %P %z"

// fLiquidDate is LiquidJS's LiquidDate: the time, and the time shown.
type fLiquidDate struct {
	ms       float64   // the time (Date.getTime())
	disp     time.Time // the wall clock shown, as UTC
	offset   float64   // minutes behind UTC (JavaScript's getTimezoneOffset)
	fixed    bool      // a time zone was given
	zoneName string    // the IANA name given, else ""
}

func filterDate(c *Context, v any, args []any) (any, error) {
	format := ToValue(fArg(args, 0))
	f := fDefaultDateFormat
	if !IsNil(format) {
		f = Stringify(format)
	}
	return fDateFormat(c, v, f, fArg(args, 1))
}

// fDateFormat formats v with f, or returns v when it is no date.
func fDateFormat(c *Context, v any, f string, tz any) (any, error) {
	d, err := fParseDate(c, v, tz)
	if err != nil || d == nil {
		return v, err
	}
	return fStrftime(c, d, f)
}

func fStringifyDate(c *Context, v any, month string, typ, style any) (any, error) {
	d, err := fParseDate(c, v, nil)
	if err != nil || d == nil {
		return v, err
	}
	if typ == "ordinal" {
		day := strconv.Itoa(d.disp.Day())
		if style == "US" {
			return fStrftime(c, d, month+" "+day+"%q, %Y")
		}
		return fStrftime(c, d, day+"%q "+month+" %Y")
	}
	return fStrftime(c, d, "%d "+month+" %Y")
}

// fParseDate is LiquidJS's parseDate: nil when v is no date. tz is the
// filter's time zone argument (nil or null: none).
func fParseDate(c *Context, v any, tz any) (*fLiquidDate, error) {
	v = ToValue(v)
	var ms float64 // a time value: NaN for an invalid date
	switch t := v.(type) {
	case nil, nullType:
		return nil, nil
	case float64:
		ms = jsvalue.TimeClip(t * 1000)
	case string:
		switch {
		case t == "now" || t == "today":
			ms = float64(c.Now().UnixMilli())
		case fAllDigits(t):
			ms = jsvalue.TimeClip(jsvalue.StringToNumber(t) * 1000)
		default:
			ms = jsvalue.ParseDate(t)
		}
	default:
		// new Date(value): a primitive that is not a string is a number.
		p := toPrimitive(t)
		if s, isStr := p.(string); isStr {
			ms = jsvalue.ParseDate(s)
		} else {
			ms = jsvalue.TimeClip(jsNumber(p))
		}
	}
	ok := !math.IsNaN(ms)
	d := &fLiquidDate{ms: ms}
	if tz == Null {
		tz = nil
	}
	if tz != nil {
		d.fixed = true
		if name, isStr := tz.(string); isStr {
			// toLocaleString of an invalid date is "Invalid Date" before
			// the time zone is looked at.
			if !ok {
				return nil, nil
			}
			loc, err := fLoadLocation(name)
			if err != nil {
				return nil, err
			}
			d.zoneName = name
			_, off := time.UnixMilli(int64(ms)).In(loc).Zone()
			d.offset = -float64(off) / 60
		} else {
			d.offset = fNumber(tz)
		}
	}
	if !ok {
		return nil, nil
	}
	disp := jsvalue.TimeClip(ms - d.offset*60000)
	if math.IsNaN(disp) {
		return nil, nil
	}
	d.disp = time.UnixMilli(int64(disp)).UTC()
	return d, nil
}

func fAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var (
	fZoneOnce  sync.Once
	fZoneNames map[string]string // lower-case name → name
)

// fLoadLocation loads an IANA time zone as Intl does: names in any case.
func fLoadLocation(name string) (*time.Location, error) {
	fail := errorf(0, "Invalid time zone specified: %s", name)
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return nil, fail
	}
	if name == "Local" {
		return nil, fail
	}
	if strings.EqualFold(name, "utc") || strings.EqualFold(name, "etc/utc") || strings.EqualFold(name, "gmt") {
		return time.UTC, nil
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc, nil
	}
	fZoneOnce.Do(func() {
		fZoneNames = map[string]string{}
		root := os.Getenv("ZONEINFO")
		if root == "" {
			root = "/usr/share/zoneinfo"
		}
		filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if rel, err := filepath.Rel(root, p); err == nil && !strings.ContainsAny(rel, ".") {
					fZoneNames[strings.ToLower(rel)] = rel
				}
			}
			return nil
		})
	})
	if real, ok := fZoneNames[strings.ToLower(name)]; ok {
		if loc, err := time.LoadLocation(real); err == nil {
			return loc, nil
		}
	}
	return nil, fail
}

// strftime

var (
	fMonthNames = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	fDayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// fPadWidths are the default widths of strftime's conversions.
var fPadWidths = map[byte]int{'C': 2, 'd': 2, 'e': 2, 'H': 2, 'I': 2, 'j': 3, 'k': 2, 'l': 2,
	'L': 3, 'm': 2, 'M': 2, 'S': 2, 'U': 2, 'W': 2, 'y': 2, 'Y': 4}

// fMaxString is V8's longest string, in UTF-16 units.
const fMaxString = 1<<29 - 24

func fIsLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

// fStrftime is LiquidJS's strftime: %[flags][width][E|O]conversion.
func fStrftime(c *Context, d *fLiquidDate, f string) (any, error) {
	var out strings.Builder
	for i := 0; i < len(f); {
		j := strings.IndexByte(f[i:], '%')
		if j < 0 {
			out.WriteString(f[i:])
			break
		}
		j += i
		out.WriteString(f[i:j])
		k := j + 1
		for k < len(f) && strings.IndexByte("-_0^#:", f[k]) >= 0 {
			k++
		}
		flags := f[j+1 : k]
		w := k
		for k < len(f) && f[k] >= '0' && f[k] <= '9' {
			k++
		}
		width := f[w:k]
		if k < len(f) && (f[k] == 'E' || f[k] == 'O') && k+1 < len(f) {
			if r := fRuneAt(f, k+1); !fIsLineTerminator(r) {
				k++
			}
		}
		if k >= len(f) || fIsLineTerminator(fRuneAt(f, k)) {
			// The conversion is missing: the regular expression backs off
			// to one of the flag or width characters, an unknown
			// conversion, which is output as it is.
			if k == j+1 {
				out.WriteByte('%')
				i = j + 1
				continue
			}
			out.WriteString(f[j:k])
			i = k
			continue
		}
		r := fRuneAt(f, k)
		n := len(string(r))
		if r >= 0x80 {
			// Not a conversion; output it as it is.
			out.WriteString(f[j : k+n])
			i = k + n
			continue
		}
		s, err := fFormat(c, d, byte(r), flags, width, f[j:k+1])
		if err != nil {
			return nil, err
		}
		out.WriteString(s)
		i = k + 1
	}
	return out.String(), nil
}

func fRuneAt(s string, i int) rune {
	for _, r := range s[i:] {
		return r
	}
	return -1
}

func fPad(c *Context, s string, width float64, ch string, start bool) (string, error) {
	n := width - float64(jsvalue.Len16(s))
	if n <= 0 || math.IsNaN(n) {
		return s, nil
	}
	if n+float64(jsvalue.Len16(s)) > fMaxString {
		return "", errorf(0, "Invalid string length")
	}
	if n > 64 {
		if err := c.WouldMake(int(n)); err != nil {
			return "", err
		}
	}
	if start {
		return strings.Repeat(ch, int(n)) + s, nil
	}
	return s + strings.Repeat(ch, int(n)), nil
}

// fYearDay is LiquidJS's getDayOfYear, whose leap years are JavaScript's
// `(y & 3) === 0 && (y % 100 || (y % 400 === 0 && y))`: year 0 is none.
func fYearDay(t time.Time) int {
	y := t.Year()
	leap := y&3 == 0 && (y%100 != 0 || y%400 == 0 && y != 0)
	n := t.YearDay()
	if isLeap := y%4 == 0 && (y%100 != 0 || y%400 == 0); isLeap && !leap && t.Month() > 2 {
		n--
	}
	return n
}

// fWeekOfYear is the week number with weeks starting on startDay.
func fWeekOfYear(d *fLiquidDate, startDay int) string {
	since := (int(d.disp.Weekday()) - startDay + 7) % 7
	return strconv.Itoa(int(math.Floor(float64(fYearDay(d.disp)-1-since+7) / 7)))
}

func fOrdinal(day int) string {
	switch day {
	case 11, 12, 13:
		return "th"
	}
	switch day % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// fOffsetString is %z: ±hhmm (±hh:mm with the ':' flag).
func fOffsetString(d *fLiquidDate, colon bool) string {
	n := math.Abs(d.offset)
	h := math.Floor(n / 60)
	m := math.Mod(n, 60)
	sign := "+"
	if d.offset > 0 {
		sign = "-"
	}
	pad := func(x float64) string {
		s := jsvalue.NumberToString(x)
		if jsvalue.Len16(s) < 2 {
			s = "0" + s
		}
		return s
	}
	sep := ""
	if colon {
		sep = ":"
	}
	return sign + pad(h) + sep + pad(m)
}

func fHour12(h int) int {
	if h%12 == 0 {
		return 12
	}
	return h % 12
}

// fLocaleDate and fLocaleTime are en-US's toLocaleDateString and
// toLocaleTimeString.
func fLocaleDate(t time.Time) string {
	return strconv.Itoa(int(t.Month())) + "/" + strconv.Itoa(t.Day()) + "/" + strconv.Itoa(t.Year())
}

func fLocaleTime(t time.Time) string {
	ampm := "AM"
	if t.Hour() >= 12 {
		ampm = "PM"
	}
	return strconv.Itoa(fHour12(t.Hour())) + ":" + fTwo(t.Minute()) + ":" + fTwo(t.Second()) + " " + ampm
}

func fTwo(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// fFormat is one conversion; input is the conversion's text, output for an
// unknown conversion.
func fFormat(c *Context, d *fLiquidDate, conv byte, flags, width, input string) (string, error) {
	t := d.disp
	var ret string
	switch conv {
	case 'a':
		ret = fDayNames[t.Weekday()][:3]
	case 'A':
		ret = fDayNames[t.Weekday()]
	case 'b', 'h':
		ret = fMonthNames[t.Month()-1][:3]
	case 'B':
		ret = fMonthNames[t.Month()-1]
	case 'c':
		ret = fLocaleDate(t) + ", " + fLocaleTime(t)
	case 'C':
		ret = jsvalue.NumberToString(math.Floor(float64(t.Year()) / 100))
	case 'd', 'e':
		ret = strconv.Itoa(t.Day())
	case 'H', 'k':
		ret = strconv.Itoa(t.Hour())
	case 'I', 'l':
		ret = strconv.Itoa(fHour12(t.Hour()))
	case 'j':
		ret = strconv.Itoa(fYearDay(t))
	case 'L':
		ret = strconv.Itoa(t.Nanosecond() / 1e6)
	case 'm':
		ret = strconv.Itoa(int(t.Month()))
	case 'M':
		ret = strconv.Itoa(t.Minute())
	case 'N':
		w := jsvalue.StringToNumber(width)
		if w == 0 || math.IsNaN(w) {
			w = 9
		}
		s := fTwo(t.Nanosecond() / 1e6)
		if len(s) < 3 {
			s = "0" + s
		}
		if w < 3 {
			s = s[:int(w)]
		}
		var err error
		if ret, err = fPad(c, s, w, "0", false); err != nil {
			return "", err
		}
	case 'p':
		ret = "AM"
		if t.Hour() >= 12 {
			ret = "PM"
		}
	case 'P':
		ret = "am"
		if t.Hour() >= 12 {
			ret = "pm"
		}
	case 'q':
		ret = fOrdinal(t.Day())
	case 's':
		ret = jsvalue.NumberToString(math.Floor(d.ms / 1000))
	case 'S':
		ret = strconv.Itoa(t.Second())
	case 'u':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		ret = strconv.Itoa(wd)
	case 'U':
		ret = fWeekOfYear(d, 0)
	case 'w':
		ret = strconv.Itoa(int(t.Weekday()))
	case 'W':
		ret = fWeekOfYear(d, 1)
	case 'x':
		ret = fLocaleDate(t)
	case 'X':
		ret = fLocaleTime(t)
	case 'y':
		ret = strconv.Itoa((t.Year()%100 + 100) % 100)
	case 'Y':
		ret = strconv.Itoa(t.Year())
	case 'z':
		ret = fOffsetString(d, strings.Contains(flags, ":"))
	case 'Z':
		switch {
		case !d.fixed:
			ret = "UTC"
		case d.zoneName != "":
			ret = d.zoneName
		default:
			ret = fOffsetString(d, strings.Contains(flags, ":"))
		}
	case 't':
		ret = "\t"
	case 'n':
		ret = "\n"
	case '%':
		ret = "%"
	default:
		return input, nil
	}
	padChar := "0"
	if strings.IndexByte("aAbBceklpP", conv) >= 0 {
		padChar = " "
	}
	padWidth := jsvalue.StringToNumber(width)
	if padWidth == 0 || math.IsNaN(padWidth) {
		padWidth = float64(fPadWidths[conv])
	}
	switch {
	case strings.Contains(flags, "^"):
		ret = fUpper(ret)
	case strings.Contains(flags, "#"):
		if strings.ContainsAny(ret, "abcdefghijklmnopqrstuvwxyz") {
			ret = fUpper(ret)
		} else {
			ret = fLower(ret)
		}
	}
	switch {
	case strings.Contains(flags, "_"):
		padChar = " "
	case strings.Contains(flags, "0"):
		padChar = "0"
	}
	if strings.Contains(flags, "-") {
		padWidth = 0
	}
	if padChar == "0" && strings.HasPrefix(ret, "-") {
		s, err := fPad(c, ret[1:], padWidth-1, padChar, true)
		return "-" + s, err
	}
	return fPad(c, ret, padWidth, padChar, true)
}
