package jsvalue

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Strings are UTF-8 in Go and UTF-16 in JavaScript: lengths and indexes
// count UTF-16 code units. A code unit that is half of a surrogate pair
// cannot be held in a Go string; cut out alone, it becomes U+FFFD.

// IsASCII reports whether s is ASCII only, where a byte is a code unit.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Len16 is s.length: the number of UTF-16 code units.
func Len16(s string) int {
	if IsASCII(s) {
		return len(s)
	}
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Substring is s.substring(from, to) in UTF-16 code units, for
// 0 <= from <= to <= Len16(s).
func Substring(s string, from, to int) string {
	if IsASCII(s) {
		return s[from:to]
	}
	return string(utf16.Decode(utf16.Encode([]rune(s))[from:to]))
}

// ArrayIndex reports whether key is a canonical array index ("0", "17";
// not "01", "-1" or 2^32-1 and above) and which: the property keys that
// arrays and strings index by, and that objects order first.
func ArrayIndex(key string) (int, bool) {
	if key == "" || len(key) > 10 || (key[0] == '0' && len(key) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		if !isDigit(key[i]) {
			return 0, false
		}
		n = n*10 + uint64(key[i]-'0')
	}
	if n >= 1<<32-1 {
		return 0, false
	}
	return int(n), true
}
