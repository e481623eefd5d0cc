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
	"unicode/utf16"
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

// fMaxTime is the largest time a JavaScript Date holds, in ms.
const fMaxTime = 8.64e15

// fLiquidDate is LiquidJS's LiquidDate: the time, and the time shown.
type fLiquidDate struct {
	ms       float64   // the time (Date.getTime())
	disp     time.Time // the wall clock shown, as UTC
	offset   float64   // minutes behind UTC (JavaScript's getTimezoneOffset)
	fixed    bool      // a time zone was given
	zoneName string    // the IANA name given, else ""
}

// fTimeClip is JavaScript's TimeClip: NaN outside the range of dates,
// else the integer toward zero.
func fTimeClip(ms float64) (float64, bool) {
	if math.IsNaN(ms) || math.Abs(ms) > fMaxTime {
		return 0, false
	}
	return math.Trunc(ms) + 0, true
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
	var ms float64
	ok := true
	switch t := v.(type) {
	case nil, nullType:
		return nil, nil
	case float64:
		ms, ok = fTimeClip(t * 1000)
	case string:
		switch {
		case t == "now" || t == "today":
			ms = float64(c.Now().UnixMilli())
		case fAllDigits(t):
			ms, ok = fTimeClip(StringToNumber(t) * 1000)
		default:
			ms, ok = fParseJSDate(t)
		}
	default:
		// new Date(value): a primitive that is not a string is a number.
		p := fPrimitive(t)
		if s, isStr := p.(string); isStr {
			ms, ok = fParseJSDate(s)
		} else {
			ms, ok = fTimeClip(jsNumber(p))
		}
	}
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
	disp, ok := fTimeClip(ms - d.offset*60000)
	if !ok {
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
	n := width - float64(Len16(s))
	if n <= 0 || math.IsNaN(n) {
		return s, nil
	}
	if n+float64(Len16(s)) > fMaxString {
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
		s := NumberString(x)
		if Len16(s) < 2 {
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
		ret = NumberString(math.Floor(float64(t.Year()) / 100))
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
		w := StringToNumber(width)
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
		ret = NumberString(math.Floor(d.ms / 1000))
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
	padWidth := StringToNumber(width)
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

// V8's Date parser (Date.parse, new Date(string)): the ES5 ISO format
// first, then the legacy formats. Local time is UTC here.

const (
	fdtInvalid = iota
	fdtUnknown
	fdtNumber
	fdtSymbol
	fdtSpace
	fdtEnd
	fdtKeyword
)

// Keyword types.
const (
	fkwNone = iota
	fkwMonth
	fkwZone
	fkwTimeSep
	fkwAMPM
)

const fdNone = math.MaxInt32

type fdToken struct {
	kind   int
	kw     int // keyword type
	value  int
	length int
}

func (t fdToken) isNumber() bool         { return t.kind == fdtNumber }
func (t fdToken) isSymbol(c int) bool    { return t.kind == fdtSymbol && t.value == c }
func (t fdToken) isSign() bool           { return t.isSymbol('+') || t.isSymbol('-') }
func (t fdToken) sign() int              { return 44 - t.value }
func (t fdToken) fixedNumber(n int) bool { return t.kind == fdtNumber && t.length == n }
func (t fdToken) isKeywordType(k int) bool {
	return t.kind == fdtKeyword && t.kw == k
}
func (t fdToken) isZ() bool { return t.isKeywordType(fkwZone) && t.length == 1 && t.value == 0 }

var fdKeywords = []struct {
	prefix string
	kw     int
	value  int
}{
	{"jan", fkwMonth, 1}, {"feb", fkwMonth, 2}, {"mar", fkwMonth, 3}, {"apr", fkwMonth, 4},
	{"may", fkwMonth, 5}, {"jun", fkwMonth, 6}, {"jul", fkwMonth, 7}, {"aug", fkwMonth, 8},
	{"sep", fkwMonth, 9}, {"oct", fkwMonth, 10}, {"nov", fkwMonth, 11}, {"dec", fkwMonth, 12},
	{"am\x00", fkwAMPM, 0}, {"pm\x00", fkwAMPM, 12},
	{"ut\x00", fkwZone, 0}, {"utc", fkwZone, 0}, {"z\x00\x00", fkwZone, 0}, {"gmt", fkwZone, 0},
	{"cdt", fkwZone, -5}, {"cst", fkwZone, -6}, {"edt", fkwZone, -4}, {"est", fkwZone, -5},
	{"mdt", fkwZone, -6}, {"mst", fkwZone, -7}, {"pdt", fkwZone, -7}, {"pst", fkwZone, -8},
	{"t\x00\x00", fkwTimeSep, 0},
}

// fdScanner tokenizes a date string of UTF-16 units; a NUL ends it.
type fdScanner struct {
	s    []uint16
	pos  int
	next fdToken
}

func (s *fdScanner) ch() int {
	if s.pos < len(s.s) {
		return int(s.s[s.pos])
	}
	return 0
}

func (s *fdScanner) peek() fdToken { return s.next }

func (s *fdScanner) take() fdToken {
	t := s.next
	s.next = s.scan()
	return t
}

func (s *fdScanner) skipSymbol(c int) bool {
	if s.next.isSymbol(c) {
		s.next = s.scan()
		return true
	}
	return false
}

func (s *fdScanner) scan() fdToken {
	ch := s.ch()
	switch {
	case ch == 0:
		return fdToken{kind: fdtEnd}
	case ch >= '0' && ch <= '9':
		n, i, start := 0, 0, s.pos
		for s.ch() == '0' {
			s.pos++
		}
		for ch := s.ch(); ch >= '0' && ch <= '9'; ch = s.ch() {
			if i < 9 {
				n = n*10 + ch - '0'
			}
			i++
			s.pos++
		}
		return fdToken{kind: fdtNumber, value: n, length: s.pos - start}
	case ch == ':' || ch == '-' || ch == '+' || ch == '.' || ch == ')':
		s.pos++
		return fdToken{kind: fdtSymbol, value: ch, length: 1}
	case ch >= 'A' && !fdIsWhiteSpace(ch):
		var pre [3]byte
		n := 0
		for ch := s.ch(); ch >= 'A' && !fdIsWhiteSpace(ch); ch = s.ch() {
			if n < 3 {
				pre[n] = byte((ch | 0x20) & 0xff)
				if ch|0x20 > 0xff {
					pre[n] = 0xff
				}
			}
			n++
			s.pos++
		}
		for _, k := range fdKeywords {
			if string(pre[:]) == k.prefix && (n <= 3 || k.kw == fkwMonth) {
				return fdToken{kind: fdtKeyword, kw: k.kw, value: k.value, length: n}
			}
		}
		return fdToken{kind: fdtKeyword, kw: fkwNone, length: n}
	case isJSSpace(rune(ch)):
		s.pos++
		return fdToken{kind: fdtSpace, length: 1}
	case ch == '(':
		balance := 0
		for {
			switch s.ch() {
			case ')':
				balance--
			case '(':
				balance++
			}
			s.pos++
			if balance <= 0 || s.ch() == 0 {
				break
			}
		}
		return fdToken{kind: fdtUnknown, length: 1}
	}
	s.pos++
	return fdToken{kind: fdtUnknown, length: 1}
}

// fdIsWhiteSpace is JavaScript's WhiteSpace (no line terminators).
func fdIsWhiteSpace(ch int) bool {
	return isJSSpace(rune(ch)) && ch != '\n' && ch != '\r' && ch != 0x2028 && ch != 0x2029
}

type fdDay struct {
	comp       [3]int
	n          int
	namedMonth int
	iso        bool
}

func (d *fdDay) add(n int) bool {
	if d.n < 3 {
		d.comp[d.n] = n
		d.n++
		return true
	}
	return false
}

func fdBetween(x, lo, hi int) bool { return x >= lo && x <= hi }
func fdIsMonth(x int) bool         { return fdBetween(x, 1, 12) }
func fdIsDay(x int) bool           { return fdBetween(x, 1, 31) }

func (d *fdDay) write() (year, month, day int, ok bool) {
	if d.n < 1 {
		return 0, 0, 0, false
	}
	for d.n < 3 {
		d.comp[d.n] = 1
		d.n++
	}
	month, day = fdNone, fdNone
	if d.namedMonth == fdNone {
		if d.iso || !fdIsDay(d.comp[0]) {
			year, month, day = d.comp[0], d.comp[1], d.comp[2]
		} else {
			month, day, year = d.comp[0], d.comp[1], d.comp[2]
		}
	} else {
		month = d.namedMonth
		if !fdIsDay(d.comp[0]) {
			year, day = d.comp[0], d.comp[1]
		} else {
			day, year = d.comp[0], d.comp[1]
		}
	}
	if !d.iso {
		if fdBetween(year, 0, 49) {
			year += 2000
		} else if fdBetween(year, 50, 99) {
			year += 1900
		}
	}
	if !fdIsMonth(month) || !fdIsDay(day) {
		return 0, 0, 0, false
	}
	return year, month - 1, day, true
}

type fdTime struct {
	comp       [4]int
	n          int
	hourOffset int
}

func (t *fdTime) empty() bool { return t.n == 0 }
func (t *fdTime) add(n int) bool {
	if t.n < 4 {
		t.comp[t.n] = n
		t.n++
		return true
	}
	return false
}
func (t *fdTime) addFinal(n int) bool {
	if !t.add(n) {
		return false
	}
	for t.n < 4 {
		t.comp[t.n] = 0
		t.n++
	}
	return true
}
func (t *fdTime) expecting(n int) bool {
	return t.n == 1 && fdBetween(n, 0, 59) || t.n == 2 && fdBetween(n, 0, 59) || t.n == 3 && fdBetween(n, 0, 999)
}

func (t *fdTime) write() (h, m, s, ms int, ok bool) {
	for t.n < 4 {
		t.comp[t.n] = 0
		t.n++
	}
	h, m, s, ms = t.comp[0], t.comp[1], t.comp[2], t.comp[3]
	if t.hourOffset != fdNone {
		if !fdBetween(h, 0, 12) {
			return 0, 0, 0, 0, false
		}
		h = h%12 + t.hourOffset
	}
	if !fdBetween(h, 0, 23) || !fdBetween(m, 0, 59) || !fdBetween(s, 0, 59) || !fdBetween(ms, 0, 999) {
		if h != 24 || m != 0 || s != 0 || ms != 0 {
			return 0, 0, 0, 0, false
		}
	}
	return h, m, s, ms, true
}

type fdZone struct{ sign, hour, minute int }

func (z *fdZone) set(hours int) {
	z.sign = 1
	if hours < 0 {
		z.sign = -1
	}
	z.hour, z.minute = hours*z.sign, 0
}
func (z *fdZone) setSign(s int) {
	z.sign = 1
	if s < 0 {
		z.sign = -1
	}
}
func (z *fdZone) expecting(n int) bool {
	return z.hour != fdNone && z.minute == fdNone && fdBetween(n, 0, 59)
}
func (z *fdZone) isUTC() bool { return z.hour == 0 && z.minute == 0 }
func (z *fdZone) empty() bool { return z.hour == fdNone }

// write gives the offset in seconds; has false when there is none.
func (z *fdZone) write() (offset int, has, ok bool) {
	if z.sign == fdNone {
		return 0, false, true
	}
	if z.hour == fdNone {
		z.hour = 0
	}
	if z.minute == fdNone {
		z.minute = 0
	}
	total := uint64(uint32(z.hour))*3600 + uint64(uint32(z.minute))*60
	if total > math.MaxInt32 {
		return 0, false, false
	}
	if z.sign < 0 {
		return -int(total), true, true
	}
	return int(total), true, true
}

// fdReadMilliseconds reads the first three digits of a fraction.
func fdReadMilliseconds(t fdToken) int {
	n, l := t.value, t.length
	switch {
	case l == 1:
		n *= 100
	case l == 2:
		n *= 10
	case l > 3:
		if l > 9 {
			l = 9
		}
		for ; l > 3; l-- {
			n /= 10
		}
	}
	return n
}

// fdParseES5 reads an ES5 date-time string as far as it goes; the token to
// go on with in the legacy parser, fdtEnd when done, fdtInvalid to fail.
func fdParseES5(s *fdScanner, day *fdDay, tm *fdTime, tz *fdZone) fdToken {
	if s.peek().isSign() {
		signTok := s.take()
		if !s.peek().fixedNumber(6) {
			return signTok
		}
		sign := signTok.sign()
		year := s.take().value
		if sign < 0 && year == 0 {
			return signTok
		}
		day.add(sign * year)
	} else if s.peek().fixedNumber(4) {
		day.add(s.take().value)
	} else {
		return s.take()
	}
	if s.skipSymbol('-') {
		if !s.peek().fixedNumber(2) || !fdIsMonth(s.peek().value) {
			return s.take()
		}
		day.add(s.take().value)
		if s.skipSymbol('-') {
			if !s.peek().fixedNumber(2) || !fdIsDay(s.peek().value) {
				return s.take()
			}
			day.add(s.take().value)
		}
	}
	invalid := fdToken{kind: fdtInvalid}
	if !s.peek().isKeywordType(fkwTimeSep) {
		if s.peek().kind != fdtEnd {
			return s.take()
		}
	} else {
		s.take()
		if !s.peek().fixedNumber(2) || !fdBetween(s.peek().value, 0, 24) {
			return invalid
		}
		hour24 := s.peek().value == 24
		tm.add(s.take().value)
		if !s.skipSymbol(':') {
			return invalid
		}
		if !s.peek().fixedNumber(2) || !fdBetween(s.peek().value, 0, 59) || hour24 && s.peek().value > 0 {
			return invalid
		}
		tm.add(s.take().value)
		if s.skipSymbol(':') {
			if !s.peek().fixedNumber(2) || !fdBetween(s.peek().value, 0, 59) || hour24 && s.peek().value > 0 {
				return invalid
			}
			tm.add(s.take().value)
			if s.skipSymbol('.') {
				if !s.peek().isNumber() || hour24 && s.peek().value > 0 {
					return invalid
				}
				tm.add(fdReadMilliseconds(s.take()))
			}
		}
		if s.peek().isZ() {
			s.take()
			tz.set(0)
		} else if s.peek().isSign() {
			tz.setSign(s.take().sign())
			if s.peek().fixedNumber(4) {
				hm := s.take().value
				h, m := hm/100, hm%100
				if !fdBetween(h, 0, 23) || !fdBetween(m, 0, 59) {
					return invalid
				}
				tz.hour, tz.minute = h, m
			} else {
				if !s.peek().fixedNumber(2) || !fdBetween(s.peek().value, 0, 23) {
					return invalid
				}
				tz.hour = s.take().value
				if !s.skipSymbol(':') {
					return invalid
				}
				if !s.peek().fixedNumber(2) || !fdBetween(s.peek().value, 0, 59) {
					return invalid
				}
				tz.minute = s.take().value
			}
		}
		if s.peek().kind != fdtEnd {
			return invalid
		}
	}
	// Date-only forms without an offset are UTC; date-time forms local.
	if tz.empty() && tm.empty() {
		tz.set(0)
	}
	day.iso = true
	return fdToken{kind: fdtEnd}
}

// fParseJSDate is Date.parse in a process whose local time is UTC: the
// time in ms, ok false for an invalid date.
func fParseJSDate(str string) (float64, bool) {
	s := &fdScanner{s: utf16.Encode([]rune(str))}
	s.next = s.scan()
	day := &fdDay{namedMonth: fdNone}
	tm := &fdTime{hourOffset: fdNone}
	tz := &fdZone{sign: fdNone, hour: fdNone, minute: fdNone}

	tok := fdParseES5(s, day, tm, tz)
	if tok.kind == fdtInvalid {
		return 0, false
	}
	hasNumber := day.n > 0
	for ; tok.kind != fdtEnd; tok = s.take() {
		switch {
		case tok.isNumber():
			hasNumber = true
			n := tok.value
			if s.skipSymbol(':') {
				if s.skipSymbol(':') {
					if !tm.empty() {
						return 0, false
					}
					tm.add(n)
					tm.add(0)
				} else {
					if !tm.add(n) {
						return 0, false
					}
					if s.peek().isSymbol('.') {
						s.take()
					}
				}
			} else if s.skipSymbol('.') && tm.expecting(n) {
				tm.add(n)
				if !s.peek().isNumber() {
					return 0, false
				}
				tm.addFinal(fdReadMilliseconds(s.take()))
			} else if tz.expecting(n) {
				tz.minute = n
			} else if tm.expecting(n) {
				tm.addFinal(n)
				p := s.peek()
				if p.kind != fdtEnd && p.kind != fdtSpace && !p.isZ() && !p.isSign() {
					return 0, false
				}
			} else {
				if !day.add(n) {
					return 0, false
				}
				s.skipSymbol('-')
			}
		case tok.kind == fdtKeyword:
			switch {
			case tok.kw == fkwAMPM && !tm.empty():
				tm.hourOffset = tok.value
			case tok.kw == fkwMonth:
				day.namedMonth = tok.value
				s.skipSymbol('-')
			case tok.kw == fkwZone && hasNumber:
				tz.set(tok.value)
			default:
				if hasNumber || s.peek().isNumber() {
					return 0, false
				}
			}
		case tok.isSign() && (tz.isUTC() || !tm.empty()):
			tz.setSign(tok.sign())
			n, length := 0, 0
			if s.peek().isNumber() {
				t := s.take()
				n, length = t.value, t.length
			}
			hasNumber = true
			switch {
			case s.peek().isSymbol(':'):
				tz.hour, tz.minute = n, fdNone
			case length == 1 || length == 2:
				tz.hour, tz.minute = n, 0
			case length == 3 || length == 4:
				tz.hour, tz.minute = n/100, n%100
			default:
				return 0, false
			}
		case (tok.isSign() || tok.isSymbol(')')) && hasNumber:
			return 0, false
		}
	}
	year, month, dd, ok := day.write()
	if !ok {
		return 0, false
	}
	h, m, sec, ms, ok := tm.write()
	if !ok {
		return 0, false
	}
	offset, hasOffset, ok := tz.write()
	if !ok {
		return 0, false
	}
	// MakeDay, MakeTime, MakeDate.
	if year < -1000000 || year > 1000000 {
		return 0, false
	}
	days := time.Date(year, time.Month(month+1), 1, 0, 0, 0, 0, time.UTC).Unix()/86400 + int64(dd) - 1
	t := float64(days)*864e5 + float64(h)*3600000 + float64(m)*60000 + float64(sec)*1000 + float64(ms)
	if !hasOffset {
		if math.Abs(t) > fMaxTime+864e6 {
			return 0, false
		}
	} else {
		t -= float64(offset) * 1000
		if math.Abs(t) > fMaxTime {
			return 0, false
		}
	}
	return fTimeClip(t)
}
