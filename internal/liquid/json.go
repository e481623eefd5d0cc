package liquid

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// JSONStringify is JavaScript's JSON.stringify(v, null, indent). Undefined
// at the top gives "" (JavaScript gives undefined); drops print as the
// objects LiquidJS's drops are.
func JSONStringify(v any, indent string) string {
	var b strings.Builder
	if !writeJSON(&b, v, indent, "") {
		return ""
	}
	return b.String()
}

// writeJSON writes v; false when v is undefined (left out of objects, null
// in arrays).
func writeJSON(b *strings.Builder, v any, indent, cur string) bool {
	switch t := v.(type) {
	case nil:
		return false
	case nullType:
		b.WriteString("null")
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		s := jsvalue.NumberToString(t)
		if s == "NaN" || s == "Infinity" || s == "-Infinity" {
			s = "null"
		}
		b.WriteString(s)
	case string:
		writeJSONString(b, t)
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return true
		}
		inner := cur + indent
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if indent != "" {
				b.WriteByte('\n')
				b.WriteString(inner)
			}
			if !writeJSON(b, x, indent, inner) {
				b.WriteString("null")
			}
		}
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(cur)
		}
		b.WriteByte(']')
	case *Map:
		inner := cur + indent
		b.WriteByte('{')
		n := 0
		for _, k := range t.keys {
			x := t.vals[k]
			if x == nil {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			if indent != "" {
				b.WriteByte('\n')
				b.WriteString(inner)
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeJSON(b, x, indent, inner)
		}
		if indent != "" && n > 0 {
			b.WriteByte('\n')
			b.WriteString(cur)
		}
		b.WriteByte('}')
	case *Forloop:
		m := NewMap(4)
		m.Set("i", float64(t.i))
		m.Set("length", float64(t.length))
		m.Set("name", t.name)
		if t.table {
			m.Set("cols", float64(t.cols))
		}
		return writeJSON(b, m, indent, cur)
	case Drop:
		b.WriteString("{}")
	default:
		return false
	}
	return true
}

const hexDigits = "0123456789abcdef"

// writeJSONString quotes s as JSON.stringify does.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\ufffd`)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// JSONIndent is JSON.stringify's space argument: a number of spaces (at
// most 10) or the first 10 characters of a string.
func JSONIndent(space any) string {
	switch t := toValue(space).(type) {
	case float64:
		n := int(min(10, t))
		if n < 1 {
			return ""
		}
		return strings.Repeat(" ", n)
	case string:
		return truncate16(t, 10)
	}
	return ""
}

// ParseJSON decodes JSON into the engine's values (objects keep their key
// order, numbers are float64, null is Null). Leniencies of npm jsonrepair
// that a render can need: an unknown escape keeps the escaped character.
func ParseJSON(s string) (any, error) {
	d := &jsonDecoder{s: s}
	d.ws()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.ws()
	if d.i != len(d.s) {
		return nil, d.errorf("unexpected character")
	}
	return v, nil
}

type jsonDecoder struct {
	s string
	i int
}

const maxJSONDepth = 1000

func (d *jsonDecoder) errorf(msg string) error {
	return &Error{Msg: "the rendered controls are not valid JSON: " + msg + " at position " + strconv.Itoa(d.i), Pos: -1}
}

func (d *jsonDecoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, d.errorf("too deep")
	}
	if d.i >= len(d.s) {
		return nil, d.errorf("unexpected end")
	}
	switch c := d.s[d.i]; {
	case c == '{':
		d.i++
		m := NewMap(4)
		d.ws()
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			return m, nil
		}
		for {
			d.ws()
			if d.i >= len(d.s) {
				return m, nil // jsonrepair closes what the text left open
			}
			if d.s[d.i] != '"' {
				return nil, d.errorf("expected a key")
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			d.ws()
			if d.i >= len(d.s) || d.s[d.i] != ':' {
				return nil, d.errorf("expected ':'")
			}
			d.i++
			d.ws()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m.Set(k, v)
			d.ws()
			if d.i < len(d.s) && d.s[d.i] == ',' {
				d.i++
				continue
			}
			if d.i >= len(d.s) {
				return m, nil
			}
			if d.s[d.i] == '}' {
				d.i++
				return m, nil
			}
			return nil, d.errorf("expected ',' or '}'")
		}
	case c == '[':
		d.i++
		a := []any{}
		d.ws()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			return a, nil
		}
		for {
			d.ws()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			d.ws()
			if d.i < len(d.s) && d.s[d.i] == ',' {
				d.i++
				continue
			}
			if d.i >= len(d.s) {
				return a, nil
			}
			if d.s[d.i] == ']' {
				d.i++
				return a, nil
			}
			return nil, d.errorf("expected ',' or ']'")
		}
	case c == '"':
		return d.str()
	case c == 't' && strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return true, nil
	case c == 'f' && strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return false, nil
	case c == 'n' && strings.HasPrefix(d.s[d.i:], "null"):
		d.i += 4
		return Null, nil
	case c == '-' || c >= '0' && c <= '9':
		j := d.i
		if d.s[j] == '-' {
			j++
		}
		for j < len(d.s) && strings.IndexByte("0123456789.eE+-", d.s[j]) >= 0 {
			j++
		}
		f, err := strconv.ParseFloat(d.s[d.i:j], 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
				return nil, d.errorf("bad number")
			}
		}
		d.i = j
		return f, nil
	}
	return nil, d.errorf("unexpected character")
}

func (d *jsonDecoder) str() (string, error) {
	d.i++ // the opening quote
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		if c == '"' && d.endsString() {
			s := d.s[start:d.i]
			d.i++
			return s, nil
		}
		if c == '\\' || c == '"' || c < 0x20 {
			break
		}
		d.i++
	}
	var b strings.Builder
	b.WriteString(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"' && d.endsString():
			d.i++
			return b.String(), nil
		case c < 0x20 && strings.IndexByte("\n\r\t\b\f", c) < 0:
			return "", d.errorf("control character in a string")
		case c != '\\':
			b.WriteByte(c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			d.i++
			return b.String(), nil
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", d.errorf("bad \\u escape")
			}
			if r >= 0xd800 && r < 0xdc00 && strings.HasPrefix(d.s[d.i:], `\u`) {
				d.i += 2
				r2, ok := d.hex4()
				if ok && r2 >= 0xdc00 && r2 < 0xe000 {
					r = (r-0xd800)<<10 + (r2 - 0xdc00) + 0x10000
				} else {
					d.i -= 2
					if ok {
						d.i -= 4
					}
				}
			}
			b.WriteRune(r)
		default:
			// jsonrepair drops the backslash of an unknown escape.
			d.i--
		}
	}
	return b.String(), nil // jsonrepair closes a string the text left open
}

// endsString reports whether the quote at d.i closes the string: as npm
// jsonrepair decides, a quote followed by anything but a delimiter is part
// of the text (rendered HTML attributes, a quoted word).
func (d *jsonDecoder) endsString() bool {
	j := d.i + 1
	for j < len(d.s) && strings.IndexByte(" \t\n\r", d.s[j]) >= 0 {
		j++
	}
	return j >= len(d.s) || strings.IndexByte(",}]:", d.s[j]) >= 0
}

func (d *jsonDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return rune(n), true
}
