// V8's Date parser (Date.parse, new Date(string)): the ES5 ISO format
// first, then the legacy formats. Local time is UTC here.

package liquid

import (
	"math"
	"time"
	"unicode/utf16"
)

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
