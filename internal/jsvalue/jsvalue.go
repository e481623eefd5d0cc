// Package jsvalue holds the JavaScript semantics that Herald's
// JavaScript-compatible code shares: the Liquid engine (internal/liquid, as
// LiquidJS), the step-condition evaluator (internal/jsonlogic, as
// json-logic-js), and the senders of signed JSON (internal/httpstep,
// internal/bridge, as JSON.stringify). Apart from JSON it works on Go
// strings and float64 only, so that each evaluator keeps its own value model
// (what stands for null, undefined and objects) and builds its coercions on
// these:
//
//   - numbers: Number(string), parseFloat, String(number), ToIntegerOrInfinity;
//   - strings: white space as JavaScript trims it, lengths and indexes in
//     UTF-16 code units, canonical array-index keys;
//   - dates: new Date(string) as V8 (Node.js) parses it, and the Date
//     abstract operations (MakeDay, MakeTime, MakeDate, TimeClip) in UTC,
//     the time zone Novu's server and Herald run in;
//   - JSON: JSON.parse into ordered objects (ParseJSON, Object) and
//     JSON.stringify (Stringify), whose output is a fixed point of both.
//
// The functions are pure and safe for concurrent use.
package jsvalue

import "strings"

// IsSpace reports whether r is StrWhiteSpaceChar: WhiteSpace or
// LineTerminator, what String.prototype.trim and Number() strip.
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// isWhiteSpace is WhiteSpace alone, without the line terminators.
func isWhiteSpace(r rune) bool {
	return IsSpace(r) && r != '\n' && r != '\r' && r != 0x2028 && r != 0x2029
}

// TrimSpace is String.prototype.trim: s without the white space and line
// terminators at either end.
func TrimSpace(s string) string { return strings.TrimFunc(s, IsSpace) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
