package jsvalue

import (
	"math"
	"unicode/utf8"
)

// ParseDate is the time value of new Date(s) (and Date.parse(s)) in V8
// (Node.js 20) with TZ=UTC, NaN for an invalid date; LiquidJS's date filter
// hands strings to the same constructor. It is V8's date parser
// (src/date/dateparser*.{h,cc}), followed here rule for
// rule. It first reads an ES5 ISO 8601 string —
// V8's date parser (src/date/dateparser*.{h,cc}), followed here rule for
// rule. It first reads an ES5 ISO 8601 string —
// [+-YY]YYYY[-MM[-DD]][THH:mm[:ss[.s+]][Z|±hh:mm|±hhmm]], T and Z in either
// case, date-only forms in UTC, date-times without an offset in local time
// (UTC here) — and hands what it cannot read to the legacy parser, which
// takes numbers, month names (any word starting jan..dec), am/pm, zone names
// (UT, UTC, GMT, Z, EST, EDT, CST, CDT, MST, MDT, PST, PDT), ±hh[:mm]
// offsets, and ignores parenthesised text and unknown words before the first
// number: "2024/01/02", "Jan 2 2024", "2024-01-02 10:00", "Tue, 02 Jan 2024
// 10:00:00 GMT", and also "vip 2" (2001-02-01). White space is
// JavaScript's, Unicode's included (U+00A0, U+3000, U+FEFF ...); any other
// non-ASCII character is part of a word, as its UTF-16 code units are in V8.
func ParseDate(s string) float64 {
	in := &dateReader{s: s}
	in.next()
	sc := &dateScanner{in: in}
	sc.peeked = sc.scan()
	var day dayComposer
	var tm timeComposer
	tz := tzComposer{sign: none, hour: none, minute: none}
	day.namedMonth, tm.hourOffset = none, none

	tok := parseISODate(sc, &day, &tm, &tz)
	if tok.tag == tagInvalid {
		return math.NaN()
	}
	hasNumber := day.index > 0
	for ; tok.tag != tagEnd; tok = sc.next() {
		switch {
		case tok.tag == tagNumber:
			hasNumber = true
			n := tok.value
			switch {
			case sc.skipSymbol(':'):
				if sc.skipSymbol(':') {
					if tm.index > 0 {
						return math.NaN()
					}
					tm.add(n)
					tm.add(0)
				} else {
					if !tm.add(n) {
						return math.NaN()
					}
					if sc.peek().isSymbol('.') {
						sc.next()
					}
				}
			case sc.skipSymbol('.') && tm.isExpecting(n):
				tm.add(n)
				if sc.peek().tag != tagNumber {
					return math.NaN()
				}
				ms := readMilliseconds(sc.next())
				if ms < 0 {
					return math.NaN()
				}
				tm.addFinal(ms)
			case tz.isExpecting(n):
				tz.minute = n
			case tm.isExpecting(n):
				tm.addFinal(n)
				p := sc.peek()
				if p.tag != tagEnd && p.tag != tagSpace && !p.isKeywordZ() && !p.isSign() {
					return math.NaN()
				}
			default:
				if !day.add(n) {
					return math.NaN()
				}
				sc.skipSymbol('-')
			}
		case tok.tag >= 0: // a word
			switch {
			case tok.tag == kwAmPm && tm.index > 0:
				tm.hourOffset = tok.value
			case tok.tag == kwMonth:
				day.namedMonth = tok.value
				sc.skipSymbol('-')
			case tok.tag == kwZone && hasNumber:
				tz.set(tok.value)
			default:
				if hasNumber || sc.peek().tag == tagNumber {
					return math.NaN()
				}
			}
		case tok.isSign() && (tz.isUTC() || tm.index > 0):
			tz.sign = 1
			if tok.value == '-' {
				tz.sign = -1
			}
			n, length := 0, 0
			if sc.peek().tag == tagNumber {
				t := sc.next()
				n, length = t.value, t.length
			}
			hasNumber = true
			switch {
			case sc.peek().isSymbol(':'):
				tz.hour, tz.minute = n, none
			case length == 1 || length == 2:
				tz.hour, tz.minute = n, 0
			case length == 3 || length == 4:
				tz.hour, tz.minute = n/100, n%100
			default:
				return math.NaN()
			}
		case (tok.isSign() || tok.isSymbol(')')) && hasNumber:
			return math.NaN()
		}
	}

	year, month, date, ok := day.write()
	if !ok {
		return math.NaN()
	}
	h, mi, sec, ms, ok := tm.write()
	if !ok {
		return math.NaN()
	}
	offset, hasOffset, ok := tz.write()
	if !ok {
		return math.NaN()
	}
	t := MakeDate(MakeDay(float64(year), float64(month-1), float64(date)), MakeTime(float64(h), float64(mi), float64(sec), float64(ms)))
	if !hasOffset {
		// Local time, which is UTC; V8 refuses it beyond ±(MaxTime + 10 days).
		if !(t >= -MaxTime-864e6 && t <= MaxTime+864e6) {
			return math.NaN()
		}
	} else {
		t -= float64(offset) * 1000
	}
	return TimeClip(t)
}

// parseISODate reads as much of an ES5 date-time string as it can. It
// returns the token the legacy parser goes on with, tagEnd when the string
// was a complete ES5 string, or tagInvalid when it cannot be a date.
func parseISODate(sc *dateScanner, day *dayComposer, tm *timeComposer, tz *tzComposer) dateToken {
	switch {
	case sc.peek().isSign():
		sign := sc.next()
		if !sc.peek().isFixedNumber(6) {
			return sign
		}
		year := sc.next().value
		if sign.value == '-' {
			if year == 0 {
				return sign
			}
			year = -year
		}
		day.add(year)
	case sc.peek().isFixedNumber(4):
		day.add(sc.next().value)
	default:
		return sc.next()
	}
	if sc.skipSymbol('-') {
		if p := sc.peek(); !p.isFixedNumber(2) || !between(p.value, 1, 12) {
			return sc.next()
		}
		day.add(sc.next().value)
		if sc.skipSymbol('-') {
			if p := sc.peek(); !p.isFixedNumber(2) || !between(p.value, 1, 31) {
				return sc.next()
			}
			day.add(sc.next().value)
		}
	}
	if sc.peek().tag != kwTimeSep {
		if sc.peek().tag != tagEnd {
			return sc.next()
		}
	} else {
		sc.next()
		invalid := dateToken{tag: tagInvalid}
		if p := sc.peek(); !p.isFixedNumber(2) || !between(p.value, 0, 24) {
			return invalid
		}
		hour24 := sc.peek().value == 24
		tm.add(sc.next().value)
		if !sc.skipSymbol(':') {
			return invalid
		}
		if p := sc.peek(); !p.isFixedNumber(2) || !between(p.value, 0, 59) || (hour24 && p.value > 0) {
			return invalid
		}
		tm.add(sc.next().value)
		if sc.skipSymbol(':') {
			if p := sc.peek(); !p.isFixedNumber(2) || !between(p.value, 0, 59) || (hour24 && p.value > 0) {
				return invalid
			}
			tm.add(sc.next().value)
			if sc.skipSymbol('.') {
				if p := sc.peek(); p.tag != tagNumber || (hour24 && p.value > 0) {
					return invalid
				}
				tm.add(readMilliseconds(sc.next()))
			}
		}
		switch p := sc.peek(); {
		case p.isKeywordZ():
			sc.next()
			tz.set(0)
		case p.isSign():
			tz.sign = 1
			if sc.next().value == '-' {
				tz.sign = -1
			}
			if sc.peek().isFixedNumber(4) {
				hm := sc.next().value
				if !between(hm/100, 0, 23) || !between(hm%100, 0, 59) {
					return invalid
				}
				tz.hour, tz.minute = hm/100, hm%100
			} else {
				if p := sc.peek(); !p.isFixedNumber(2) || !between(p.value, 0, 23) {
					return invalid
				}
				tz.hour = sc.next().value
				if !sc.skipSymbol(':') {
					return invalid
				}
				if p := sc.peek(); !p.isFixedNumber(2) || !between(p.value, 0, 59) {
					return invalid
				}
				tz.minute = sc.next().value
			}
		}
		if sc.peek().tag != tagEnd {
			return invalid
		}
	}
	// "When the time zone offset is absent, date-only forms are interpreted
	// as a UTC time and date-time forms are interpreted as a local time."
	if tz.hour == none && tm.index == 0 {
		tz.set(0)
	}
	day.iso = true
	return dateToken{tag: tagEnd}
}

const none = math.MaxInt32

func between(x, lo, hi int) bool { return x >= lo && x <= hi }

// readMilliseconds reads the first three significant digits of a numeral
// (whose value holds at most its first nine digits).
func readMilliseconds(t dateToken) int {
	n, length := t.value, t.length
	switch {
	case length == 1:
		n *= 100
	case length == 2:
		n *= 10
	case length > 3:
		length = min(length, 9)
		for ; length > 3; length-- {
			n /= 10
		}
	}
	return n
}

type dayComposer struct {
	comp       [3]int
	index      int
	namedMonth int
	iso        bool
}

func (d *dayComposer) add(n int) bool {
	if d.index >= len(d.comp) {
		return false
	}
	d.comp[d.index] = n
	d.index++
	return true
}

// write orders the numbers read into year, month (1..12) and day.
func (d *dayComposer) write() (year, month, day int, ok bool) {
	if d.index < 1 {
		return 0, 0, 0, false
	}
	for ; d.index < len(d.comp); d.index++ {
		d.comp[d.index] = 1
	}
	month, day = none, none
	switch {
	case d.namedMonth == none && (d.iso || !between(d.comp[0], 1, 31)):
		year, month, day = d.comp[0], d.comp[1], d.comp[2]
	case d.namedMonth == none:
		month, day, year = d.comp[0], d.comp[1], d.comp[2]
	case !between(d.comp[0], 1, 31):
		month, year, day = d.namedMonth, d.comp[0], d.comp[1]
	default:
		month, day, year = d.namedMonth, d.comp[0], d.comp[1]
	}
	if !d.iso {
		switch {
		case between(year, 0, 49):
			year += 2000
		case between(year, 50, 99):
			year += 1900
		}
	}
	return year, month, day, between(month, 1, 12) && between(day, 1, 31)
}

type timeComposer struct {
	comp       [4]int
	index      int
	hourOffset int
}

func (t *timeComposer) isExpecting(n int) bool {
	return (t.index == 1 && between(n, 0, 59)) || (t.index == 2 && between(n, 0, 59)) ||
		(t.index == 3 && between(n, 0, 999))
}

func (t *timeComposer) add(n int) bool {
	if t.index >= len(t.comp) {
		return false
	}
	t.comp[t.index] = n
	t.index++
	return true
}

func (t *timeComposer) addFinal(n int) bool {
	if !t.add(n) {
		return false
	}
	for ; t.index < len(t.comp); t.index++ {
		t.comp[t.index] = 0
	}
	return true
}

func (t *timeComposer) write() (h, m, s, ms int, ok bool) {
	for ; t.index < len(t.comp); t.index++ {
		t.comp[t.index] = 0
	}
	h, m, s, ms = t.comp[0], t.comp[1], t.comp[2], t.comp[3]
	if t.hourOffset != none {
		if !between(h, 0, 12) {
			return 0, 0, 0, 0, false
		}
		h = h%12 + t.hourOffset
	}
	if !between(h, 0, 23) || !between(m, 0, 59) || !between(s, 0, 59) || !between(ms, 0, 999) {
		if h != 24 || m != 0 || s != 0 || ms != 0 {
			return 0, 0, 0, 0, false
		}
	}
	return h, m, s, ms, true
}

type tzComposer struct{ sign, hour, minute int }

func (z *tzComposer) set(hours int) {
	z.sign = 1
	if hours < 0 {
		z.sign = -1
	}
	z.hour, z.minute = hours*z.sign, 0
}

func (z *tzComposer) isExpecting(n int) bool {
	return z.hour != none && z.minute == none && between(n, 0, 59)
}

func (z *tzComposer) isUTC() bool { return z.hour == 0 && z.minute == 0 }

// write returns the offset in seconds, if one was read.
func (z *tzComposer) write() (offset int, has, ok bool) {
	if z.sign == none {
		return 0, false, true
	}
	h, m := z.hour, z.minute
	if h == none {
		h = 0
	}
	if m == none {
		m = 0
	}
	total := uint32(h)*3600 + uint32(m)*60 // wraps as V8's unsigned arithmetic
	if total > math.MaxInt32 {
		return 0, false, false
	}
	offset = int(total)
	if z.sign < 0 {
		offset = -offset
	}
	return offset, true, true
}

// Tokens. A tag of 0 or more is a word of that keyword type.
const (
	tagInvalid = -6 + iota
	tagUnknown
	tagSpace
	tagNumber
	tagSymbol
	tagEnd
)

const (
	kwInvalid = iota
	kwMonth
	kwZone
	kwTimeSep
	kwAmPm
)

type dateToken struct{ tag, length, value int }

func isDigitRune(c rune) bool { return c >= '0' && c <= '9' }

func (t dateToken) isSymbol(c byte) bool { return t.tag == tagSymbol && t.value == int(c) }
func (t dateToken) isSign() bool         { return t.isSymbol('+') || t.isSymbol('-') }
func (t dateToken) isFixedNumber(n int) bool {
	return t.tag == tagNumber && t.length == n
}
func (t dateToken) isKeywordZ() bool { return t.tag == kwZone && t.length == 1 && t.value == 0 }

// keywords is V8's table: a word matches an entry when its first three
// characters (lower-cased, zero-padded) do, and is no longer than three
// characters unless it is a month name.
var keywords = []struct {
	prefix      [3]byte
	kind, value int
}{
	{[3]byte{'j', 'a', 'n'}, kwMonth, 1}, {[3]byte{'f', 'e', 'b'}, kwMonth, 2},
	{[3]byte{'m', 'a', 'r'}, kwMonth, 3}, {[3]byte{'a', 'p', 'r'}, kwMonth, 4},
	{[3]byte{'m', 'a', 'y'}, kwMonth, 5}, {[3]byte{'j', 'u', 'n'}, kwMonth, 6},
	{[3]byte{'j', 'u', 'l'}, kwMonth, 7}, {[3]byte{'a', 'u', 'g'}, kwMonth, 8},
	{[3]byte{'s', 'e', 'p'}, kwMonth, 9}, {[3]byte{'o', 'c', 't'}, kwMonth, 10},
	{[3]byte{'n', 'o', 'v'}, kwMonth, 11}, {[3]byte{'d', 'e', 'c'}, kwMonth, 12},
	{[3]byte{'a', 'm'}, kwAmPm, 0}, {[3]byte{'p', 'm'}, kwAmPm, 12},
	{[3]byte{'u', 't'}, kwZone, 0}, {[3]byte{'u', 't', 'c'}, kwZone, 0},
	{[3]byte{'z'}, kwZone, 0}, {[3]byte{'g', 'm', 't'}, kwZone, 0},
	{[3]byte{'c', 'd', 't'}, kwZone, -5}, {[3]byte{'c', 's', 't'}, kwZone, -6},
	{[3]byte{'e', 'd', 't'}, kwZone, -4}, {[3]byte{'e', 's', 't'}, kwZone, -5},
	{[3]byte{'m', 'd', 't'}, kwZone, -6}, {[3]byte{'m', 's', 't'}, kwZone, -7},
	{[3]byte{'p', 'd', 't'}, kwZone, -7}, {[3]byte{'p', 's', 't'}, kwZone, -8},
	{[3]byte{'t'}, kwTimeSep, 0},
}

func lookupKeyword(prefix [3]byte, length int) (kind, value int) {
	for _, k := range keywords {
		if k.prefix == prefix && (length <= 3 || k.kind == kwMonth) {
			return k.kind, k.value
		}
	}
	return kwInvalid, 0
}

// dateReader reads a string a character at a time: ch is the character at
// pos, 0 at the end (and at a NUL, as in V8).
type dateReader struct {
	s          string
	pos, width int
	ch         rune
}

func (r *dateReader) next() {
	r.pos += r.width
	switch {
	case r.pos >= len(r.s):
		r.ch, r.width = 0, 0
	case r.s[r.pos] < utf8.RuneSelf:
		r.ch, r.width = rune(r.s[r.pos]), 1
	default:
		r.ch, r.width = utf8.DecodeRuneInString(r.s[r.pos:])
	}
}

type dateScanner struct {
	in     *dateReader
	peeked dateToken
}

func (sc *dateScanner) peek() dateToken { return sc.peeked }

func (sc *dateScanner) next() dateToken {
	t := sc.peeked
	sc.peeked = sc.scan()
	return t
}

func (sc *dateScanner) skipSymbol(c byte) bool {
	if sc.peeked.isSymbol(c) {
		sc.peeked = sc.scan()
		return true
	}
	return false
}

func (sc *dateScanner) scan() dateToken {
	in := sc.in
	start := in.pos
	switch c := in.ch; {
	case c == 0:
		return dateToken{tag: tagEnd}
	case isDigitRune(c):
		for in.ch == '0' { // leading zeros are not significant digits
			in.next()
		}
		n, i := 0, 0
		for ; isDigitRune(in.ch); i++ {
			if i < 9 {
				n = n*10 + int(in.ch-'0')
			}
			in.next()
		}
		return dateToken{tag: tagNumber, length: in.pos - start, value: n}
	case c == ':' || c == '-' || c == '+' || c == '.' || c == ')':
		in.next()
		return dateToken{tag: tagSymbol, length: 1, value: int(c)}
	case c >= 'A' && !isWhiteSpace(c): // a line terminator is part of a word
		var prefix [3]byte
		length := 0 // in UTF-16 code units
		for ; in.ch >= 'A' && !isWhiteSpace(in.ch); in.next() {
			if length < 3 {
				prefix[length] = 0xff // matches no keyword
				if in.ch < utf8.RuneSelf {
					prefix[length] = byte(in.ch) | 0x20
				}
			}
			length++
			if in.ch >= 0x10000 {
				length++ // a surrogate pair
			}
		}
		kind, value := lookupKeyword(prefix, length)
		return dateToken{tag: kind, length: length, value: value}
	case IsSpace(c):
		in.next()
		return dateToken{tag: tagSpace, length: 1}
	case c == '(':
		for balance := 0; ; {
			if in.ch == ')' {
				balance--
			} else if in.ch == '(' {
				balance++
			}
			in.next()
			if balance <= 0 || in.ch == 0 {
				break
			}
		}
		return dateToken{tag: tagUnknown, length: 1}
	}
	in.next()
	return dateToken{tag: tagUnknown, length: 1}
}
