package jsvalue

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNumberToString(t *testing.T) {
	t.Parallel()
	a, b := 0.1, 0.2
	require.Equal(t, "0.30000000000000004", NumberToString(a+b))
	for x, want := range map[float64]string{
		0: "0", 1: "1", -1.5: "-1.5", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-7: "1e-7", 1.5e-7: "1.5e-7", 1e-6: "0.000001", 123e-20: "1.23e-18", math.MaxFloat64: "1.7976931348623157e+308",
		5e-324: "5e-324", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", 2e21: "2e+21", 1.2345e21: "1.2345e+21",
		-1e21: "-1e+21", -1.5e-7: "-1.5e-7", -123.456: "-123.456", 1.5e300: "1.5e+300",
	} {
		require.Equal(t, want, NumberToString(x), "%v", x)
	}
	require.Equal(t, "NaN", NumberToString(math.NaN()))
	require.Equal(t, "0", NumberToString(math.Copysign(0, -1)))
}

func TestStringToNumber(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]float64{
		"": 0, " \n\t": 0, "5": 5, " 42 ": 42, "1e3": 1000, "1.": 1, ".5": 0.5, "+.5": 0.5, "0x1F": 31, "0b101": 5,
		"0o17": 15, "-Infinity": math.Inf(-1), "\u00a012\u3000": 12, "1e400": math.Inf(1), "-1e400": math.Inf(-1),
		// Radix literals of any length, rounded to the nearest float64.
		"0x10000000000000000": 18446744073709552000, "0b" + strings.Repeat("1", 70): 1.1805916207174113e+21,
		"0o" + strings.Repeat("7", 30): 1.2379400392853803e+27, "0x1fffffffffffff1": 144115188075855860,
	} {
		require.Equal(t, want, StringToNumber(s), "%q", s)
	}
	for _, s := range []string{"abc", "1_000", "0x", "-0x10", "1e", ".", "+", "Inf", "infinity", "12px", "0x1g",
		"0x+1", "0x_1", "0x" + strings.Repeat("f", 20) + "g", "0x" + strings.Repeat("f", 20) + "-1"} {
		require.True(t, math.IsNaN(StringToNumber(s)), "%q", s)
	}
	require.True(t, math.Signbit(StringToNumber("-0")))
}

func TestParseFloat(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]float64{
		"  3.5abc": 3.5, "-Infinityx": math.Inf(-1), "1e": 1, "1.e5": 100000, "-.5": -0.5, "0x10": 0,
		"\u00a0+7e-2z": 0.07, "1_0": 1,
	} {
		require.Equal(t, want, ParseFloat(s), "%q", s)
	}
	for _, s := range []string{"", ".e1", "-", "abc", "Inf"} {
		require.True(t, math.IsNaN(ParseFloat(s)), "%q", s)
	}
}

func TestToIntegerOrInfinity(t *testing.T) {
	t.Parallel()
	require.Equal(t, 0.0, ToIntegerOrInfinity(math.NaN()))
	require.Equal(t, 2.0, ToIntegerOrInfinity(2.9))
	require.Equal(t, -2.0, ToIntegerOrInfinity(-2.9))
	require.False(t, math.Signbit(ToIntegerOrInfinity(-0.5)))
	require.Equal(t, math.Inf(-1), ToIntegerOrInfinity(math.Inf(-1)))
}
