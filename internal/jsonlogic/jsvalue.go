package jsonlogic

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// JavaScript values as the evaluator holds them: nil (null), undefined, bool,
// float64, string, []any (an array) and map[string]any (an object). Data may
// also hold json.Number and Go integers: norm turns them into float64 where a
// value is read.

// undefinedType is JavaScript's undefined: an absent operand, the value of
// {"and": []}, an element of {"map": [xs]} without logic.
type undefinedType struct{}

// undefined is the one undefined value.
var undefined any = undefinedType{}

func isUndefined(v any) bool {
	_, ok := v.(undefinedType)
	return ok
}

// norm turns the numbers a caller's data may hold into float64; other
// values come back as they are (the same interface, so an array keeps its
// identity).
func norm(v any) any {
	switch x := v.(type) {
	case float64, string, bool, nil, []any, map[string]any, undefinedType:
		return v
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return math.NaN()
		}
		return f
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case uint:
		return float64(x)
	case uint64:
		return float64(x)
	case uint32:
		return float64(x)
	case float32:
		return float64(x)
	}
	return v
}

// sameObject reports whether a and b hold the same JavaScript object: the
// same map, or the same boxed array. An array read twice from the same place
// is the same interface value, so its data word is the same; two arrays
// built apart are boxed apart, even when both are empty (their backing
// arrays may share an address, their boxes do not). This is === on objects.
func sameObject(a, b any) bool {
	pa := (*[2]unsafe.Pointer)(unsafe.Pointer(&a))
	pb := (*[2]unsafe.Pointer)(unsafe.Pointer(&b))
	return pa[0] == pb[0] && pa[1] == pb[1]
}

// strictEquals is JavaScript's === over normalised values.
func strictEquals(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case undefinedType:
		return isUndefined(b)
	}
	return sameObject(a, b)
}

// sameValueZero is the equality of Array.prototype.includes: === except that
// NaN equals NaN.
func sameValueZero(a, b any) bool {
	if x, ok := a.(float64); ok && x != x {
		y, ok := b.(float64)
		return ok && y != y
	}
	return strictEquals(a, b)
}

// jsTruthy is JavaScript's !!v.
func jsTruthy(v any) bool {
	switch x := norm(v).(type) {
	case nil, undefinedType:
		return false
	case bool:
		return x
	case float64:
		return x == x && x != 0
	case string:
		return x != ""
	}
	return true
}

// Truthy is json-logic-js's truthiness (jsonLogic.truthy): JavaScript's, except
// that an empty array is false. It is what "if", "and", "or", "!", "!!",
// "filter", "all", "some" and "none" test.
func Truthy(v any) bool {
	if a, ok := v.([]any); ok {
		return len(a) > 0
	}
	return jsTruthy(v)
}

// objectToString is ToString of a non-array object: "[object Object]", or a
// TypeError when the object has an own "toString" that is not a function
// (every own property of JSON data is not one).
func objectToString(m map[string]any) string {
	if _, ok := m["toString"]; ok {
		throw("TypeError: Cannot convert object to primitive value")
	}
	return "[object Object]"
}

// toString is JavaScript's String(v) (ToString for arrays: their elements
// joined by commas, null and undefined as "").
func (e *evaluator) toString(v any) string {
	switch x := norm(v).(type) {
	case nil:
		return "null"
	case undefinedType:
		return "undefined"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return numberToString(x)
	case string:
		return x
	case []any:
		return e.join(x, ",")
	case map[string]any:
		return objectToString(x)
	}
	return "[object Object]"
}

// join is Array.prototype.join.
func (e *evaluator) join(a []any, sep string) string {
	e.charge(len(a))
	var b strings.Builder
	for i, el := range a {
		if i > 0 {
			b.WriteString(sep)
		}
		var piece string
		switch x := norm(el).(type) {
		case nil, undefinedType:
		case string:
			piece = x
		default:
			piece = e.toString(x)
		}
		e.chargeLen(piece)
		b.WriteString(piece)
	}
	return b.String()
}

// toNumber is JavaScript's Number(v).
func (e *evaluator) toNumber(v any) float64 {
	switch x := norm(v).(type) {
	case nil:
		return 0
	case undefinedType:
		return math.NaN()
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		e.chargeLen(x)
		return stringToNumber(x)
	case []any:
		return stringToNumber(e.join(x, ","))
	case map[string]any:
		objectToString(x)
	}
	return math.NaN()
}

// parseFloat is JavaScript's parseFloat(v): the longest decimal prefix of
// String(v) after white space, else NaN.
func (e *evaluator) parseFloat(v any) float64 {
	if f, ok := norm(v).(float64); ok {
		if f == 0 {
			return 0 // String(-0) is "0"
		}
		return f
	}
	s := trimJSSpaceLeft(e.toString(v))
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if strings.HasPrefix(s[i:], "Infinity") {
		if s[0] == '-' {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	end := scanDecimal(s, i)
	if end < 0 {
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(s[:end], 64)
	return f
}

// scanDecimal returns the end of the longest StrUnsignedDecimalLiteral
// (without Infinity) at s[i:], or -1 when there is none.
func scanDecimal(s string, i int) int {
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return -1
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// stringToNumber is ToNumber of a string: white space around a decimal
// literal (with Infinity), or 0x/0o/0b digits; "" and blanks are 0.
func stringToNumber(s string) float64 {
	s = trimJSSpace(s)
	if s == "" {
		return 0
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			n, ok := new(big.Int).SetString(s[2:], base)
			if !ok || strings.ContainsAny(s[2:], "_+-") {
				return math.NaN()
			}
			f, _ := new(big.Float).SetInt(n).Float64()
			return f
		}
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	if s[i:] == "Infinity" {
		if s[0] == '-' {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	if scanDecimal(s, i) != len(s) {
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// isJSSpace is StrWhiteSpaceChar: WhiteSpace or LineTerminator.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func trimJSSpace(s string) string { return strings.TrimRightFunc(trimJSSpaceLeft(s), isJSSpace) }

func trimJSSpaceLeft(s string) string { return strings.TrimLeftFunc(s, isJSSpace) }

// numberToString is Number::toString(x) in base 10: the shortest digits
// that round-trip, fixed between 1e-7 and 1e21, else exponential.
func numberToString(x float64) string {
	switch {
	case x != x:
		return "NaN"
	case x == 0:
		return "0"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case x < 0:
		return "-" + numberToString(-x)
	case x < 1e21 && x == math.Trunc(x):
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	s := strconv.FormatFloat(x, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(digits), e+1
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	m := digits[:1]
	if k > 1 {
		m += "." + digits[1:]
	}
	return m + "e" + sign + strconv.Itoa(abs(n-1))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// toIntegerOrInfinity is ToIntegerOrInfinity: NaN is 0, others truncated.
func toIntegerOrInfinity(f float64) float64 {
	if f != f {
		return 0
	}
	return math.Trunc(f) + 0
}

// Strings are UTF-8 here and UTF-16 in JavaScript: lengths and indexes count
// UTF-16 code units. A code unit that is half of a surrogate pair cannot be
// held in a Go string; it becomes U+FFFD.

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func utf16Len(s string) int {
	if isASCII(s) {
		return len(s)
	}
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// substring is s.substring(from, to) in code units, 0 <= from <= to <= length.
func substring(s string, from, to int) string {
	if isASCII(s) {
		return s[from:to]
	}
	return string(utf16.Decode(utf16.Encode([]rune(s))[from:to]))
}

// pathSeg is one step of a var path: a property name, with its value as an
// array index when it is one ("0", "12"; not "01" or "-1"), else -1.
type pathSeg struct {
	key string
	idx int
}

func newPathSeg(key string) pathSeg {
	seg := pathSeg{key: key, idx: -1}
	if key == "" || len(key) > 10 || (key[0] == '0' && len(key) > 1) {
		return seg
	}
	n := 0
	for i := 0; i < len(key); i++ {
		if !isDigit(key[i]) {
			return seg
		}
		n = n*10 + int(key[i]-'0')
	}
	if n < math.MaxUint32 {
		seg.idx = n
	}
	return seg
}

// getProp is v[key] for JSON-like values: own properties of objects, the
// elements and length of arrays and strings; undefined otherwise. Properties
// that JavaScript objects inherit (toString, constructor, __proto__, a
// number's toFixed ...) are functions or prototypes there and undefined
// here.
func (e *evaluator) getProp(v any, seg pathSeg) any {
	switch x := v.(type) {
	case map[string]any:
		if val, ok := x[seg.key]; ok {
			return norm(val)
		}
	case []any:
		if seg.idx >= 0 && seg.idx < len(x) {
			return norm(x[seg.idx])
		}
		if seg.key == "length" {
			return float64(len(x))
		}
	case string:
		e.chargeLen(x)
		if seg.key == "length" {
			return float64(utf16Len(x))
		}
		if seg.idx >= 0 && seg.idx < utf16Len(x) {
			return substring(x, seg.idx, seg.idx+1)
		}
	}
	return undefined
}
