package liquid

// The string filters of LiquidJS, and the helpers the filters_*.go files
// share: JavaScript's view of arguments, truthiness, UTF-16 strings and
// case mapping.

import (
	"math"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"github.com/herald-notify/herald/internal/jsvalue"
)

func init() {
	register("append", filterAppend)
	register("prepend", filterPrepend)
	register("lstrip", filterLstrip)
	register("rstrip", filterRstrip)
	register("strip", filterStrip)
	register("downcase", filterDowncase)
	register("upcase", filterUpcase)
	register("capitalize", filterCapitalize)
	register("remove", filterRemove)
	register("remove_first", filterRemoveFirst)
	register("remove_last", filterRemoveLast)
	register("replace", filterReplace)
	register("replace_first", filterReplaceFirst)
	register("replace_last", filterReplaceLast)
	register("split", filterSplit)
	register("strip_newlines", filterStripNewlines)
	register("squish", filterSquish)
	register("normalize_whitespace", filterNormalizeWhitespace)
	register("truncate", filterTruncate)
	register("truncatewords", filterTruncatewords)
	register("number_of_words", filterNumberOfWords)
	register("array_to_sentence_string", filterArrayToSentenceString)
}

// fArg is the i-th argument as the JavaScript filter receives it: LiquidJS
// passes a keyword argument in its place among the positional ones, as the
// pair [key, value]; nil (undefined) when absent.
func fArg(args []any, i int) any {
	if i >= len(args) {
		return nil
	}
	if kv, ok := args[i].(KV); ok {
		return []any{kv.Key, kv.Value}
	}
	return args[i]
}

// fTruthyJS is JavaScript's ToBoolean (not Liquid's truth): 0, NaN and the empty string
// are false too, and every object (drops included) is true.
func fTruthyJS(v any) bool {
	switch t := v.(type) {
	case nil, nullType:
		return false
	case bool:
		return t
	case float64:
		return t != 0 && !math.IsNaN(t)
	case string:
		return t != ""
	}
	return true
}

// fNumber is JavaScript's ToNumber after ToPrimitive (as arithmetic and
// relational operators coerce).
func fNumber(v any) float64 { return jsNumber(toPrimitive(v)) }

// fToNumber is LiquidJS's toNumber, `+value || 0`: never NaN nor -0.
func fToNumber(v any) float64 {
	f := fNumber(v)
	if math.IsNaN(f) || f == 0 {
		return 0
	}
	return f
}

// fAdd is JavaScript's binary +.
func fAdd(a, b any) any {
	pa, pb := toPrimitive(a), toPrimitive(b)
	_, sa := pa.(string)
	_, sb := pb.(string)
	if sa || sb {
		return JSString(pa) + JSString(pb)
	}
	return jsNumber(pa) + jsNumber(pb)
}

// fLessEq is JavaScript's a <= b.
func fLessEq(a, b any) bool { c, ok := compare(a, b); return ok && c <= 0 }

// fGreaterEq is JavaScript's a >= b.
func fGreaterEq(a, b any) bool { c, ok := compare(a, b); return ok && c >= 0 }

// fRelIndex turns a slice bound (Array.prototype.slice's start or end) into
// an index in [0, n].
func fRelIndex(v any, n int) int {
	k := jsvalue.ToIntegerOrInfinity(fNumber(v))
	if k < 0 {
		k += float64(n)
		if k < 0 {
			return 0
		}
		return int(k)
	}
	if k > float64(n) {
		return n
	}
	return int(k)
}

// fToArray is LiquidJS's toArray: nil is [], an array itself, else [v].
func fToArray(v any) []any {
	v = ToValue(v)
	if IsNil(v) {
		return []any{}
	}
	if a, ok := v.([]any); ok {
		return a
	}
	return []any{v}
}

// fUnits is a string's UTF-16 code units.
func fUnits(s string) []uint16 { return utf16.Encode([]rune(s)) }

// fFromUnits is the string of UTF-16 code units; a lone surrogate, which a
// Go string cannot hold, becomes U+FFFD.
func fFromUnits(u []uint16) string { return string(utf16.Decode(u)) }

// fAdvance is LiquidJS's advanceCodePoints: the UTF-16 index count code
// points after from (count compared as JavaScript compares numbers).
func fAdvance(u []uint16, from int, count float64) int {
	index := from
	for i := 0; float64(i) < count && index < len(u); i++ {
		if u[index] >= 0xd800 && u[index] < 0xdc00 && index+1 < len(u) && u[index+1] >= 0xdc00 && u[index+1] <= 0xdfff {
			index += 2
		} else {
			index++
		}
	}
	return index
}

// fWouldMake asks the budget before a filter makes n bytes that an
// argument multiplies (a separator joined between many items); small
// values are not worth asking about.
func fWouldMake(c *Context, n int) error {
	if n < 1<<16 {
		return nil
	}
	return c.WouldMake(n)
}

// fCodePoints is LiquidJS's codePointLength.
func fCodePoints(s string) int { return utf8.RuneCountInString(s) }

// Case mapping is JavaScript's toUpperCase/toLowerCase: Unicode's full,
// locale-independent mappings (ß → SS, final sigma). x/text's tables are
// Unicode 15; the pairs Unicode 16 added (which Node knows) are mapped
// after.
var (
	fUpperPool = sync.Pool{New: func() any { c := cases.Upper(language.Und); return &c }}
	fLowerPool = sync.Pool{New: func() any { c := cases.Lower(language.Und); return &c }}
)

// fCase16 holds the case pairs Unicode 16 and 17 added: upper → lower.
var fCase16 = map[rune]rune{
	0xA7DC: 0x19B, 0xA7CB: 0x264, 0x1C89: 0x1C8A, 0xA7CC: 0xA7CD, 0xA7CE: 0xA7CF,
	0xA7D2: 0xA7D3, 0xA7D4: 0xA7D5, 0xA7DA: 0xA7DB,
}

func fLower16(r rune) (rune, bool) {
	if l, ok := fCase16[r]; ok {
		return l, true
	}
	switch {
	case r >= 0x10D50 && r <= 0x10D65:
		return r + 0x20, true
	case r >= 0x16EA0 && r <= 0x16EB8:
		return r + 0x1B, true
	}
	return r, false
}

// fCase16Upper is fCase16 reversed: lower → upper.
var fCase16Upper = func() map[rune]rune {
	m := make(map[rune]rune, len(fCase16))
	for u, l := range fCase16 {
		m[l] = u
	}
	return m
}()

func fUpper16(r rune) (rune, bool) {
	if u, ok := fCase16Upper[r]; ok {
		return u, true
	}
	switch {
	case r >= 0x10D70 && r <= 0x10D85:
		return r - 0x20, true
	case r >= 0x16EBB && r <= 0x16ED3:
		return r - 0x1B, true
	}
	return r, false
}

func fMap16(s string, f func(rune) (rune, bool)) string {
	var b *strings.Builder
	for i, r := range s {
		m, ok := f(r)
		if ok && b == nil {
			b = &strings.Builder{}
			b.WriteString(s[:i])
		}
		if b != nil {
			b.WriteRune(m)
		}
	}
	if b == nil {
		return s
	}
	return b.String()
}

// fUpper is JavaScript's String.prototype.toUpperCase.
func fUpper(s string) string {
	if jsvalue.IsASCII(s) {
		return strings.ToUpper(s)
	}
	c := fUpperPool.Get().(*cases.Caser)
	out := c.String(s)
	fUpperPool.Put(c)
	return fMap16(out, fUpper16)
}

// fLower is JavaScript's String.prototype.toLowerCase.
func fLower(s string) string {
	if jsvalue.IsASCII(s) {
		return strings.ToLower(s)
	}
	c := fLowerPool.Get().(*cases.Caser)
	out := c.String(s)
	fLowerPool.Put(c)
	return fMap16(out, fLower16)
}

// fSplit is String.prototype.split with a string separator: an empty
// separator splits into UTF-16 units.
func fSplit(s, sep string) []string {
	if sep != "" {
		return strings.Split(s, sep)
	}
	out := make([]string, 0, len(s))
	for _, r := range s {
		if r >= 0x10000 {
			// Two lone surrogates, which a Go string cannot hold.
			out = append(out, "\uFFFD", "\uFFFD")
			continue
		}
		out = append(out, string(r))
	}
	return out
}

// fCollapseSpace replaces each run of JavaScript white space with one
// space (s.replace(/\s+/g, ' ')).
func fCollapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	in := false
	for _, r := range s {
		if jsvalue.IsSpace(r) {
			if !in {
				b.WriteByte(' ')
			}
			in = true
			continue
		}
		in = false
		b.WriteRune(r)
	}
	return b.String()
}

// fSplitSpace is s.split(/\s+/).
func fSplitSpace(s string) []string {
	out := []string{}
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !jsvalue.IsSpace(r) {
			i += n
			continue
		}
		out = append(out, s[start:i])
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !jsvalue.IsSpace(r) {
				break
			}
			i += n
		}
		start = i
	}
	return append(out, s[start:])
}

func fTrim(s string) string      { return strings.TrimFunc(s, jsvalue.IsSpace) }
func fTrimStart(s string) string { return strings.TrimLeftFunc(s, jsvalue.IsSpace) }
func fTrimEnd(s string) string   { return strings.TrimRightFunc(s, jsvalue.IsSpace) }

func fRuneSet(s string) map[rune]bool {
	set := make(map[rune]bool, len(s))
	for _, r := range s {
		set[r] = true
	}
	return set
}

func filterAppend(c *Context, v any, args []any) (any, error) {
	if len(args) != 1 {
		return nil, errorf(0, "append expect 2 arguments")
	}
	return Stringify(v) + Stringify(fArg(args, 0)), nil
}

func filterPrepend(c *Context, v any, args []any) (any, error) {
	if len(args) != 1 {
		return nil, errorf(0, "prepend expect 2 arguments")
	}
	return Stringify(fArg(args, 0)) + Stringify(v), nil
}

func filterLstrip(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	if chars := fArg(args, 0); fTruthyJS(chars) {
		set := fRuneSet(Stringify(chars))
		return strings.TrimLeftFunc(s, func(r rune) bool { return set[r] }), nil
	}
	return fTrimStart(s), nil
}

func filterRstrip(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	if chars := fArg(args, 0); fTruthyJS(chars) {
		set := fRuneSet(Stringify(chars))
		return strings.TrimRightFunc(s, func(r rune) bool { return set[r] }), nil
	}
	return fTrimEnd(s), nil
}

func filterStrip(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	if chars := fArg(args, 0); fTruthyJS(chars) {
		set := fRuneSet(Stringify(chars))
		return strings.TrimFunc(s, func(r rune) bool { return set[r] }), nil
	}
	return fTrim(s), nil
}

func filterDowncase(c *Context, v any, args []any) (any, error) {
	return fLower(Stringify(v)), nil
}

func filterUpcase(c *Context, v any, args []any) (any, error) {
	return fUpper(Stringify(v)), nil
}

// capitalize: the first UTF-16 unit upper-cased (a character outside the
// BMP is half a pair there, so it stays), the rest lower-cased.
func filterCapitalize(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	if s == "" {
		return "", nil
	}
	r, n := utf8.DecodeRuneInString(s)
	first := s[:n]
	if r < 0x10000 {
		first = fUpper(first)
	}
	return first + fLower(s[n:]), nil
}

func filterRemove(c *Context, v any, args []any) (any, error) {
	s, p := Stringify(v), Stringify(fArg(args, 0))
	if p == "" {
		return s, nil
	}
	return strings.ReplaceAll(s, p, ""), nil
}

func filterRemoveFirst(c *Context, v any, args []any) (any, error) {
	return strings.Replace(Stringify(v), Stringify(fArg(args, 0)), "", 1), nil
}

func filterRemoveLast(c *Context, v any, args []any) (any, error) {
	s, p := Stringify(v), Stringify(fArg(args, 0))
	i := strings.LastIndex(s, p)
	if i < 0 {
		return s, nil
	}
	return s[:i] + s[i+len(p):], nil
}

func filterReplace(c *Context, v any, args []any) (any, error) {
	s, p, r := Stringify(v), Stringify(fArg(args, 0)), Stringify(fArg(args, 1))
	switch {
	case p != "":
		if n := strings.Count(s, p); n > 0 && len(r) > len(p) {
			if err := fWouldMake(c, len(s)+n*(len(r)-len(p))); err != nil {
				return nil, err
			}
		}
		return strings.ReplaceAll(s, p, r), nil
	case r == "":
		return s, nil
	}
	parts := fSplit(s, "")
	if err := fWouldMake(c, len(s)+len(parts)*len(r)); err != nil {
		return nil, err
	}
	return strings.Join(parts, r), nil
}

func filterReplaceFirst(c *Context, v any, args []any) (any, error) {
	return strings.Replace(Stringify(v), Stringify(fArg(args, 0)), Stringify(fArg(args, 1)), 1), nil
}

func filterReplaceLast(c *Context, v any, args []any) (any, error) {
	s, p, r := Stringify(v), Stringify(fArg(args, 0)), Stringify(fArg(args, 1))
	i := strings.LastIndex(s, p)
	if i < 0 {
		return s, nil
	}
	return s[:i] + r + s[i+len(p):], nil
}

// split drops the trailing empty strings, as Ruby's split does.
func filterSplit(c *Context, v any, args []any) (any, error) {
	parts := fSplit(Stringify(v), Stringify(fArg(args, 0)))
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func filterStripNewlines(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	s = strings.ReplaceAll(s, "\r\n", "")
	return strings.ReplaceAll(s, "\n", ""), nil
}

func filterSquish(c *Context, v any, args []any) (any, error) {
	return fTrim(fCollapseSpace(Stringify(v))), nil
}

func filterNormalizeWhitespace(c *Context, v any, args []any) (any, error) {
	return fCollapseSpace(Stringify(v)), nil
}

// truncate counts in code points but returns the input itself (not its
// string) when nothing is cut.
func filterTruncate(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	l := fArg(args, 0)
	if l == nil {
		l = 50.0
	}
	o := "..."
	if a := fArg(args, 1); a != nil {
		o = Stringify(a)
	}
	u := fUnits(s)
	lf := fNumber(l)
	if fLessEq(float64(len(u)), l) || fAdvance(u, 0, lf) >= len(u) {
		return v, nil
	}
	keep := math.Max(lf-float64(fCodePoints(o)), 0)
	return fFromUnits(u[:fAdvance(u, 0, keep)]) + o, nil
}

func filterTruncatewords(c *Context, v any, args []any) (any, error) {
	s := Stringify(v)
	words := fArg(args, 0)
	if words == nil {
		words = 15.0
	}
	o := "..."
	if a := fArg(args, 1); a != nil {
		o = Stringify(a)
	}
	arr := fSplitSpace(fTrimStart(s))
	if fLessEq(words, 0.0) {
		words = 1.0
	}
	ret := strings.Join(arr[:fRelIndex(words, len(arr))], " ")
	if fGreaterEq(float64(len(arr)), words) {
		ret += o
	}
	return ret, nil
}

// fIsCJK is number_of_words's CJK character class.
func fIsCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0xF900 && r <= 0xFAFF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x3040 && r <= 0x309F || r >= 0x30A0 && r <= 0x30FF || r >= 0xAC00 && r <= 0xD7AF
}

func filterNumberOfWords(c *Context, v any, args []any) (any, error) {
	s := fTrim(Stringify(v))
	if s == "" {
		return 0.0, nil
	}
	mode, _ := fArg(args, 0).(string)
	cjkCount := func() float64 {
		n := 0
		in := false // inside a run of other non-space characters
		for _, r := range s {
			switch {
			case fIsCJK(r):
				n++
				in = false
			case jsvalue.IsSpace(r):
				in = false
			default:
				if !in {
					n++
				}
				in = true
			}
		}
		return float64(n)
	}
	switch mode {
	case "cjk":
		return cjkCount(), nil
	case "auto":
		if strings.IndexFunc(s, fIsCJK) >= 0 {
			return cjkCount(), nil
		}
	}
	return float64(len(fSplitSpace(s))), nil
}

func filterArrayToSentenceString(c *Context, v any, args []any) (any, error) {
	arr := fToArray(v)
	conn := "and"
	if a := fArg(args, 0); a != nil {
		conn = Stringify(a)
	}
	switch len(arr) {
	case 0:
		return "", nil
	case 1:
		return arr[0], nil
	case 2:
		return JSString(arr[0]) + " " + conn + " " + JSString(arr[1]), nil
	}
	return arrayJoin(arr[:len(arr)-1], ", ") + ", " + conn + " " + JSString(arr[len(arr)-1]), nil
}
