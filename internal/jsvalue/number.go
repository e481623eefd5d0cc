package jsvalue

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// NumberToString is Number::toString(x) in base 10, what String(x) and
// template output print: the shortest digits that round-trip, fixed
// notation from 1e-7 up to 1e21, exponential outside ("1e+21", "1.5e-7");
// -0 is "0".
func NumberToString(x float64) string {
	switch {
	case x != x:
		return "NaN"
	case x == 0:
		return "0"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case math.Abs(x) < 1e21 && x == math.Trunc(x):
		return strconv.FormatFloat(x, 'f', -1, 64)
	case x < 0:
		return "-" + NumberToString(-x)
	}
	s := strconv.FormatFloat(x, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(digits), e+1 // the decimal point sits after n digits
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign, power := "+", n-1
	if power < 0 {
		sign, power = "-", -power
	}
	m := digits[:1]
	if k > 1 {
		m += "." + digits[1:]
	}
	return m + "e" + sign + strconv.Itoa(power)
}

// StringToNumber is Number(s): a decimal literal (or Infinity) between
// white space, or 0x, 0o or 0b digits of any length; "" and blanks are 0,
// anything else NaN.
func StringToNumber(s string) float64 {
	s = TrimSpace(s)
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
			return radixToNumber(s[2:], base)
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
	f, _ := strconv.ParseFloat(s, 64) // ±Inf beyond the range, as in JavaScript
	return f
}

// radixToNumber reads the digits of a 0x, 0o or 0b literal, rounded to the
// nearest float64; NaN for a sign, an underscore or a digit out of base.
func radixToNumber(digits string, base int) float64 {
	n, err := strconv.ParseUint(digits, base, 64) // no sign, no underscores
	if err == nil {
		return float64(n)
	}
	if !errors.Is(err, strconv.ErrRange) {
		return math.NaN()
	}
	b, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return math.NaN()
	}
	f, _ := new(big.Float).SetInt(b).Float64()
	return f
}

// ParseFloat is parseFloat(s): the longest decimal literal (or Infinity)
// that starts s after white space, else NaN.
func ParseFloat(s string) float64 {
	s = strings.TrimLeftFunc(s, IsSpace)
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

// ToIntegerOrInfinity is ToIntegerOrInfinity: NaN is 0, others truncated
// toward zero (-0 is 0).
func ToIntegerOrInfinity(f float64) float64 {
	if f != f {
		return 0
	}
	return math.Trunc(f) + 0
}
