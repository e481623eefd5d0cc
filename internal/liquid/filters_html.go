package liquid

// LiquidJS's html, url, base64, crypto and misc filters (json is Novu's,
// in filters_novu.go; raw is the engine's).

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/jsvalue"
)

func init() {
	register("escape", filterEscape)
	register("xml_escape", filterEscape)
	register("escape_once", filterEscapeOnce)
	register("newline_to_br", filterNewlineToBr)
	register("strip_html", filterStripHTML)

	register("url_decode", filterURLDecode)
	register("url_encode", filterURLEncode)
	register("cgi_escape", filterCGIEscape)
	register("uri_escape", filterURIEscape)
	register("slugify", filterSlugify)

	register("base64_encode", filterBase64Encode)
	register("base64_decode", filterBase64Decode)
	register("sha256", filterSHA256)
	register("hmac_sha256", filterHMACSHA256)

	register("default", filterDefault)
	register("jsonify", filterJSONify)
	register("inspect", filterJSONify) // no value of the engine is circular
	register("to_integer", filterToInteger)
}

var (
	fEscaper   = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	fUnescaper = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'")
)

func filterEscape(c *Context, v any, args []any) (any, error) {
	return fEscaper.Replace(Stringify(v)), nil
}

func filterEscapeOnce(c *Context, v any, args []any) (any, error) {
	return fEscaper.Replace(fUnescaper.Replace(Stringify(v))), nil
}

func filterNewlineToBr(c *Context, v any, args []any) (any, error) {
	s := strings.ReplaceAll(Stringify(v), "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "<br />\n"), nil
}

// strip_html removes <script>…</script>, <style>…</style>, <!--…--> and
// <…>; an opener whose closer never comes ends the stripping there, and is
// not tried again.
func filterStripHTML(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	blocks := [][2]string{{"<script", "</script>"}, {"<style", "</style>"}, {"<!--", "-->"}, {"<", ">"}}
	live := [4]bool{true, true, true, true}
	var out strings.Builder
	i := 0
	for i < len(s) {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 {
			out.WriteString(s[i:])
			return out.String(), nil
		}
		lt += i
		out.WriteString(s[i:lt])
		for k, b := range blocks {
			if !live[k] || !strings.HasPrefix(s[lt:], b[0]) {
				continue
			}
			if e := strings.Index(s[lt+len(b[0]):], b[1]); e >= 0 {
				i = lt + len(b[0]) + e + len(b[1])
				break
			}
			live[k] = false
		}
		if i <= lt {
			out.WriteString(s[lt:])
			return out.String(), nil
		}
	}
	return out.String(), nil
}

// fURIError is the URIError decodeURIComponent throws.
func fURIError() error { return errorf(0, "URI malformed") }

func fUnhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// fDecodeURIComponent is JavaScript's decodeURIComponent.
func fDecodeURIComponent(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	var b strings.Builder
	octet := func(i int) (byte, bool) {
		if i+2 >= len(s) || s[i] != '%' {
			return 0, false
		}
		h, ok1 := fUnhex(s[i+1])
		l, ok2 := fUnhex(s[i+2])
		return h<<4 | l, ok1 && ok2
	}
	for i := 0; i < len(s); {
		if s[i] != '%' {
			b.WriteByte(s[i])
			i++
			continue
		}
		x, ok := octet(i)
		if !ok {
			return "", fURIError()
		}
		i += 3
		if x < 0x80 {
			b.WriteByte(x)
			continue
		}
		n := 0
		for m := byte(0x80); x&m != 0 && n < 8; m >>= 1 {
			n++
		}
		if n == 1 || n > 4 {
			return "", fURIError()
		}
		buf := []byte{x}
		for k := 1; k < n; k++ {
			y, ok := octet(i)
			if !ok || y&0xC0 != 0x80 {
				return "", fURIError()
			}
			buf = append(buf, y)
			i += 3
		}
		r, size := utf8.DecodeRune(buf)
		if (r == utf8.RuneError && size <= 1) || size != n {
			return "", fURIError()
		}
		b.WriteRune(r)
	}
	return b.String(), nil
}

// fEncodeURI percent-encodes (upper-case hex, UTF-8) every byte not kept.
func fEncodeURI(s string, keep func(byte) bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf && keep(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func fURIUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0
}

func fURIKeep(c byte) bool { return fURIUnreserved(c) || strings.IndexByte(";/?:@&=+$,#", c) >= 0 }

// fEncodeURIComponent is JavaScript's encodeURIComponent.
func fEncodeURIComponent(s string) string { return fEncodeURI(fValidUTF8(s), fURIUnreserved) }

// fValidUTF8 replaces invalid bytes with U+FFFD, as a JavaScript string
// would hold them.
func fValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func filterURLDecode(c *Context, v any, args []any) (any, error) {
	s, err := fDecodeURIComponent(strings.ReplaceAll(Stringify(v), "+", " "))
	if err != nil {
		return nil, err
	}
	return s, nil
}

func filterURLEncode(c *Context, v any, args []any) (any, error) {
	return strings.ReplaceAll(fEncodeURIComponent(Stringify(v)), "%20", "+"), nil
}

func filterCGIEscape(c *Context, v any, args []any) (any, error) {
	s := strings.ReplaceAll(fEncodeURIComponent(Stringify(v)), "%20", "+")
	return strings.NewReplacer("!", "%21", "'", "%27", "(", "%28", ")", "%29", "*", "%2A").Replace(s), nil
}

func filterURIEscape(c *Context, v any, args []any) (any, error) {
	s := fEncodeURI(fValidUTF8(Stringify(v)), fURIKeep)
	return strings.NewReplacer("%5B", "[", "%5D", "]").Replace(s), nil
}

var fAccents = func() map[rune]string {
	m := map[rune]string{}
	for _, p := range [][2]string{
		{"àáâãäå", "a"}, {"æ", "ae"}, {"ç", "c"}, {"èéêë", "e"}, {"ìíîï", "i"}, {"ð", "d"},
		{"ñ", "n"}, {"òóôõöø", "o"}, {"ùúûü", "u"}, {"ýÿ", "y"}, {"ß", "ss"}, {"œ", "oe"},
		{"þ", "th"}, {"ẞ", "SS"}, {"Œ", "OE"}, {"Þ", "TH"},
	} {
		for _, r := range p[0] {
			m[r] = p[1]
		}
	}
	return m
}()

// fReplaceRuns replaces each run of runes that are not kept with "-".
func fReplaceRuns(s string, keep func(rune) bool) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		if keep(r) {
			b.WriteRune(r)
			in = false
			continue
		}
		if !in {
			b.WriteByte('-')
		}
		in = true
	}
	return b.String()
}

// fSlugLetter is /[\p{M}\p{L}\p{Nd}]/u. Go's tables are Unicode 15.0;
// fUnicode17 adds the letters, marks and digits Unicode 15.1 to 17 (which
// Node knows) added.
func fSlugLetter(r rune) bool {
	return unicode.In(r, unicode.M, unicode.L, unicode.Nd, fUnicode17)
}

var fUnicode17 = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x88F, 0x88F, 1}, {0x897, 0x897, 1}, {0xC5C, 0xC5C, 1}, {0xCDC, 0xCDC, 1}, {0x1ACF, 0x1ADD, 1},
		{0x1AE0, 0x1AEB, 1}, {0x1C89, 0x1C8A, 1}, {0xA7CB, 0xA7CF, 1}, {0xA7D2, 0xA7D2, 1}, {0xA7D4, 0xA7D4, 1},
		{0xA7DA, 0xA7DC, 1}, {0xA7F1, 0xA7F1, 1},
	},
	R32: []unicode.Range32{
		{0x105C0, 0x105F3, 1}, {0x10940, 0x10959, 1}, {0x10D40, 0x10D65, 1}, {0x10D69, 0x10D6D, 1},
		{0x10D6F, 0x10D85, 1}, {0x10EC2, 0x10EC7, 1}, {0x10EFA, 0x10EFC, 1}, {0x11380, 0x11389, 1},
		{0x1138B, 0x1138B, 1}, {0x1138E, 0x1138E, 1}, {0x11390, 0x113B5, 1}, {0x113B7, 0x113C0, 1},
		{0x113C2, 0x113C2, 1}, {0x113C5, 0x113C5, 1}, {0x113C7, 0x113CA, 1}, {0x113CC, 0x113D3, 1},
		{0x113E1, 0x113E2, 1}, {0x116D0, 0x116E3, 1}, {0x11B60, 0x11B67, 1}, {0x11BC0, 0x11BE0, 1},
		{0x11BF0, 0x11BF9, 1}, {0x11DB0, 0x11DDB, 1}, {0x11DE0, 0x11DE9, 1}, {0x11F5A, 0x11F5A, 1},
		{0x13460, 0x143FA, 1}, {0x16100, 0x16139, 1}, {0x16D40, 0x16D6C, 1}, {0x16D70, 0x16D79, 1},
		{0x16EA0, 0x16EB8, 1}, {0x16EBB, 0x16ED3, 1}, {0x16FF2, 0x16FF3, 1}, {0x187F8, 0x187FF, 1},
		{0x18CFF, 0x18CFF, 1}, {0x18D09, 0x18D1E, 1}, {0x18D80, 0x18DF2, 1}, {0x1CCF0, 0x1CCF9, 1},
		{0x1E5D0, 0x1E5FA, 1}, {0x1E6C0, 0x1E6DE, 1}, {0x1E6E0, 0x1E6F5, 1}, {0x1E6FE, 0x1E6FF, 1},
		{0x2B73A, 0x2B73F, 1}, {0x2CEA2, 0x2CEAD, 1}, {0x2EBF0, 0x2EE5D, 1}, {0x323B0, 0x33479, 1},
	},
}

func filterSlugify(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	mode := "default"
	if m := fArg(args, 0); m != nil {
		mode = JSString(m)
	}
	var keep func(rune) bool
	switch mode {
	case "raw":
		keep = func(r rune) bool { return !jsvalue.IsSpace(r) }
	case "default", "latin":
		keep = fSlugLetter
	case "pretty":
		keep = func(r rune) bool { return fSlugLetter(r) || strings.ContainsRune("._~!$&'()+,;=@", r) }
	case "ascii":
		keep = func(r rune) bool {
			return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}
	}
	if keep != nil {
		if mode == "latin" {
			var b strings.Builder
			for _, r := range s {
				if a, ok := fAccents[r]; ok {
					b.WriteString(a)
				} else {
					b.WriteRune(r)
				}
			}
			s = b.String()
		}
		s = fReplaceRuns(s, keep)
		s = strings.TrimPrefix(s, "-")
		s = strings.TrimSuffix(s, "-")
	}
	if fTruthyJS(fArg(args, 1)) {
		return s, nil
	}
	return fLower(s), nil
}

func filterBase64Encode(c *Context, v any, args []any) (any, error) {
	return base64.StdEncoding.EncodeToString([]byte(fValidUTF8(Stringify(v)))), nil
}

// base64_decode accepts what LiquidJS's isBase64 accepts (white space
// anywhere, "=" or "==" only ending a length that is a multiple of 4) and
// decodes the bytes as Node decodes UTF-8: each maximal invalid subpart is
// one U+FFFD.
func filterBase64Decode(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\f', '\r', ' ':
			return -1
		}
		return r
	}, s)
	if len(s)%4 == 0 {
		if strings.HasSuffix(s, "==") {
			s = s[:len(s)-2]
		} else {
			s = strings.TrimSuffix(s, "=")
		}
	}
	ok := len(s)%4 != 1
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
	}
	if !ok {
		return nil, errorf(0, "invalid base64 provided to base64_decode")
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, errorf(0, "invalid base64 provided to base64_decode")
	}
	return fDecodeUTF8(b), nil
}

// fDecodeUTF8 decodes bytes as the WHATWG UTF-8 decoder does (Node's
// Buffer.toString): a maximal subpart of an invalid sequence is one U+FFFD.
func fDecodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out.WriteByte(c)
			i++
			continue
		}
		need := 0
		lower, upper := byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lower = 2, 0xA0
		case c == 0xED:
			need, upper = 2, 0x9F
		case c >= 0xE1 && c <= 0xEF:
			need = 2
		case c == 0xF0:
			need, lower = 3, 0x90
		case c == 0xF4:
			need, upper = 3, 0x8F
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		default:
			out.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j := i + 1
		complete := true
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lower || b[j] > upper {
				complete = false
				break
			}
			lower, upper = 0x80, 0xBF
			j++
		}
		if complete {
			out.Write(b[i:j])
		} else {
			out.WriteRune(utf8.RuneError)
		}
		i = j
	}
	return out.String()
}

func filterSHA256(c *Context, v any, args []any) (any, error) {
	sum := sha256.Sum256([]byte(fValidUTF8(Stringify(v))))
	return hex.EncodeToString(sum[:]), nil
}

func filterHMACSHA256(c *Context, v any, args []any) (any, error) {
	m := hmac.New(sha256.New, []byte(fValidUTF8(Stringify(fArg(args, 0)))))
	m.Write([]byte(fValidUTF8(Stringify(v))))
	return hex.EncodeToString(m.Sum(nil)), nil
}

// default: an empty string or array, and a falsy value, give the default;
// false stays false with allow_false. The arguments after the default are
// read as entries of a JavaScript Map (new Map(args)), which throws on an
// argument that is not an object.
func filterDefault(c *Context, v any, args []any) (any, error) {
	val := ToValue(v)
	def := fArg(args, 0)
	switch t := val.(type) {
	case string:
		if t != "" {
			return val, nil
		}
		return def, nil
	case []any:
		if len(t) > 0 {
			return val, nil
		}
		return def, nil
	}
	if val == false && len(args) > 1 {
		var allow any
		for i := 1; i < len(args); i++ {
			var key, value any
			switch e := fArg(args, i).(type) {
			case []any:
				if len(e) > 0 {
					key = e[0]
				}
				if len(e) > 1 {
					value = e[1]
				}
			case *Map:
				key, _ = e.Get("0")
				value, _ = e.Get("1")
			case Drop:
			default:
				return nil, errorf(0, "Iterator value %s is not an entry object", JSString(e))
			}
			if key == "allow_false" {
				allow = value
			}
		}
		if fTruthyJS(allow) {
			return false, nil
		}
	}
	if val == false || IsNil(val) {
		return def, nil
	}
	return val, nil
}

// fJSONIndent is JSON.stringify's space argument as the indent string.
func fJSONIndent(space any) string {
	switch t := space.(type) {
	case float64:
		n := math.Min(10, jsvalue.ToIntegerOrInfinity(t))
		if n < 1 {
			return ""
		}
		return strings.Repeat(" ", int(n))
	case string:
		u := fUnits(t)
		if len(u) > 10 {
			return fFromUnits(u[:10])
		}
		return t
	}
	return ""
}

// jsonify (LiquidJS's json): JSON.stringify(value, null, space);
// undefined gives undefined.
func filterJSONify(c *Context, v any, args []any) (any, error) {
	if v == nil {
		return nil, nil
	}
	return JSONStringify(v, fJSONIndent(fArg(args, 0))), nil
}

func filterToInteger(c *Context, v any, args []any) (any, error) {
	return jsNumber(v), nil
}
