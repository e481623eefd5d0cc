// Package textcheck decides which text and JSON Herald accepts from clients:
// what both stores hold alike. PostgreSQL refuses invalid UTF-8, NUL
// characters (in text and jsonb), lone UTF-16 surrogate escapes and numbers
// beyond its numeric type, while SQLite stores them; Go's JSON decoder
// silently turns bad text into U+FFFD. So the raw bytes are checked here,
// before anything is decoded.
package textcheck

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// Why a value is refused. The texts complete a sentence naming the field.
var (
	ErrNotUTF8   = errors.New("must be valid UTF-8")
	ErrNUL       = errors.New("must not contain NUL characters")
	ErrSurrogate = errors.New("must not contain a lone UTF-16 surrogate escape")
	ErrNumber    = errors.New("must be a number a 64-bit float holds (finite, not rounding to zero, at most 100 characters)")
	ErrDepth     = errors.New("nests too deeply")
	ErrNotJSON   = errors.New("is not one JSON value")
	errTooShort  = errors.New("the document ends too soon")
)

// MaxNumberLen is the longest number literal accepted: PostgreSQL's numeric
// keeps at most 16,383 digits after the point, SQLite reads 17 or so.
const MaxNumberLen = 100

const (
	maxProblems   = 100 // problems one document reports at most
	maxValueShown = 128 // bytes of an offending token a Problem keeps
)

// Text reports why s cannot be stored as text by every store, or nil.
func Text(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0 {
			return ErrNUL
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return ErrNotUTF8
		}
		i += size
	}
	return nil
}

// Problem is one refused value inside a JSON document.
type Problem struct {
	// Path names the value: object keys and array indexes from the top
	// (empty for the top-level value; for a bad key, the key itself).
	Path []string
	// Value is the offending token as sent (escapes kept), cut at 128 bytes;
	// empty for ErrDepth.
	Value string
	Err   error
}

// JSON checks a JSON document: every string and key valid UTF-8 without NUL
// or lone surrogate escapes, every number within a float64 (and at most
// MaxNumberLen characters), nesting at most maxDepth containers. It returns
// ErrNotJSON when b is not exactly one JSON value (surrounding whitespace
// aside); otherwise the problems found, at most 100, nil when b is acceptable.
// It never recurses, so any depth is safe to scan.
func JSON(b []byte, maxDepth int) ([]Problem, error) {
	s := scanner{b: b, maxDepth: maxDepth}
	if err := s.run(); err != nil {
		return nil, ErrNotJSON
	}
	return s.problems, nil
}

type segment struct {
	key   string
	index int
	obj   bool
}

type scanner struct {
	b        []byte
	i        int
	maxDepth int
	stack    []byte    // '{' or '[' per open container
	path     []segment // one per open container, up to maxDepth
	deep     bool      // a depth problem was reported
	problems []Problem
}

func (s *scanner) report(extra *string, value []byte, err error) {
	if len(s.problems) >= maxProblems {
		return
	}
	p := Problem{Path: make([]string, 0, len(s.path)+1), Err: err}
	for _, seg := range s.path {
		if seg.obj {
			p.Path = append(p.Path, seg.key)
		} else {
			p.Path = append(p.Path, strconv.Itoa(seg.index))
		}
	}
	if extra != nil {
		p.Path = append(p.Path, *extra)
	}
	if len(value) > maxValueShown {
		value = value[:maxValueShown]
	}
	p.Value = string(value)
	s.problems = append(s.problems, p)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// run parses the whole document with an explicit stack.
func (s *scanner) run() error {
	for {
		// A value is expected here.
		s.ws()
		if s.i >= len(s.b) {
			return errTooShort
		}
		switch c := s.b[s.i]; {
		case c == '{' || c == '[':
			s.i++
			s.stack = append(s.stack, c)
			if len(s.stack) > s.maxDepth {
				if !s.deep {
					s.deep = true
					s.report(nil, nil, ErrDepth)
				}
			} else {
				s.path = append(s.path, segment{obj: c == '{'})
			}
			s.ws()
			if s.i < len(s.b) && (c == '{' && s.b[s.i] == '}' || c == '[' && s.b[s.i] == ']') {
				s.i++
				s.pop()
				break
			}
			if c == '{' {
				if err := s.key(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			raw, bad, err := s.str()
			if err != nil {
				return err
			}
			if bad != nil {
				s.report(nil, raw, bad)
			}
		case c == '-' || c >= '0' && c <= '9':
			if err := s.number(); err != nil {
				return err
			}
		default:
			if err := s.literal(); err != nil {
				return err
			}
		}
		// After a value: close containers, or move to the next member.
		for {
			s.ws()
			if len(s.stack) == 0 {
				if s.i != len(s.b) {
					return ErrNotJSON
				}
				return nil
			}
			if s.i >= len(s.b) {
				return errTooShort
			}
			top, c := s.stack[len(s.stack)-1], s.b[s.i]
			if c == ',' {
				s.i++
				if top == '{' {
					if err := s.key(); err != nil {
						return err
					}
				} else if len(s.stack) <= s.maxDepth {
					s.path[len(s.path)-1].index++
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				s.i++
				s.pop()
				continue
			}
			return ErrNotJSON
		}
	}
}

func (s *scanner) pop() {
	if len(s.stack) <= s.maxDepth {
		s.path = s.path[:len(s.path)-1]
	}
	s.stack = s.stack[:len(s.stack)-1]
}

// key reads `"name":` and makes name the current member of the open object.
func (s *scanner) key() error {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return ErrNotJSON
	}
	raw, bad, err := s.str()
	if err != nil {
		return err
	}
	name := unescape(raw)
	if bad != nil {
		if len(s.stack) <= s.maxDepth {
			s.path = s.path[:len(s.path)-1]
			s.report(&name, raw, bad)
			s.path = append(s.path, segment{obj: true})
		} else {
			s.report(nil, raw, bad)
		}
	}
	if len(s.stack) <= s.maxDepth {
		s.path[len(s.path)-1].key = name
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return ErrNotJSON
	}
	s.i++
	return nil
}

// str reads a string token; raw is its content between the quotes, bad the
// first reason it cannot be stored.
func (s *scanner) str() (raw []byte, bad error, err error) {
	s.i++ // the opening quote
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, bad, nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, nil, errTooShort
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				r, ok := hex4(s.b, s.i+2)
				if !ok {
					return nil, nil, ErrNotJSON
				}
				s.i += 6
				switch {
				case r == 0:
					bad = first(bad, ErrNUL)
				case r >= 0xD800 && r < 0xDC00:
					// A high surrogate must be followed by an escaped low one.
					if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
						if lo, ok := hex4(s.b, s.i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
							s.i += 6
							break
						}
					}
					bad = first(bad, ErrSurrogate)
				case r >= 0xDC00 && r <= 0xDFFF:
					bad = first(bad, ErrSurrogate)
				}
			default:
				return nil, nil, ErrNotJSON
			}
		case c < 0x20:
			return nil, nil, ErrNotJSON
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				bad = first(bad, ErrNotUTF8)
			}
			s.i += size
		}
	}
	return nil, nil, errTooShort
}

func first(have, next error) error {
	if have != nil {
		return have
	}
	return next
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a number token (JSON grammar) and checks its range.
func (s *scanner) number() error {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return ErrNotJSON
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return ErrNotJSON
		}
	}
	mantissaEnd := s.i
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return ErrNotJSON
		}
	}
	tok := s.b[start:s.i]
	if !numberFits(tok, tok[:mantissaEnd-start]) {
		s.report(nil, tok, ErrNumber)
	}
	return nil
}

// numberFits: short enough, finite as a float64, and not a non-zero value
// that rounds to zero.
func numberFits(tok, mantissa []byte) bool {
	if len(tok) > MaxNumberLen {
		return false
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return false // ErrRange: beyond ±MaxFloat64
	}
	if f == 0 {
		for _, c := range mantissa {
			if c >= '1' && c <= '9' {
				return false
			}
		}
	}
	return true
}

func (s *scanner) literal() error {
	for _, lit := range []string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return nil
		}
	}
	return ErrNotJSON
}

// unescape returns the text of a string token for naming a field: escapes
// resolved, anything unresolvable kept as written.
func unescape(raw []byte) string {
	hasEscape := false
	for _, c := range raw {
		if c == '\\' {
			hasEscape = true
			break
		}
	}
	if !hasEscape {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				out = append(out, '\\', 'u')
				continue
			}
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if lo, ok := hex4(raw, i+3); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, raw[i])
		}
	}
	return string(out)
}
