package liquid

// LiquidJS's math filters. Every argument (the input too) goes through
// toNumber (`+v || 0`), as argumentsToNumber does; a keyword argument is
// a [key, value] pair there, which is 0.

import (
	"math"
	"strings"

	"github.com/herald-notify/herald/internal/jsvalue"
)

func init() {
	register("abs", fNumeric(func(n []float64) float64 { return math.Abs(n[0]) }))
	register("at_least", fNumeric(func(n []float64) float64 {
		m := math.Inf(-1)
		for _, x := range n {
			m = math.Max(m, x)
		}
		return m
	}))
	register("at_most", fNumeric(func(n []float64) float64 {
		m := math.Inf(1)
		for _, x := range n {
			m = math.Min(m, x)
		}
		return m
	}))
	register("ceil", fNumeric(func(n []float64) float64 { return math.Ceil(n[0]) }))
	register("floor", fNumeric(func(n []float64) float64 { return math.Floor(n[0]) }))
	register("divided_by", fNumeric(func(n []float64) float64 {
		q := n[0] / fAt(n, 1)
		if len(n) > 2 && n[2] != 0 {
			return math.Floor(q)
		}
		return q
	}))
	register("minus", fNumeric(func(n []float64) float64 { return n[0] - fAt(n, 1) }))
	register("plus", fNumeric(func(n []float64) float64 { return n[0] + fAt(n, 1) }))
	register("times", fNumeric(func(n []float64) float64 { return n[0] * fAt(n, 1) }))
	register("modulo", fNumeric(func(n []float64) float64 {
		a := fAt(n, 1)
		return math.Mod(math.Mod(n[0], a)+a, a)
	}))
	register("round", filterRound)
}

// fNumeric makes a filter of fn, which gets the input and the arguments
// passed as numbers.
func fNumeric(fn func([]float64) float64) FilterFunc {
	return func(c *Context, v any, args []any) (any, error) {
		n := make([]float64, 1, len(args)+1)
		n[0] = fToNumber(v)
		for i := range args {
			n = append(n, fToNumber(fArg(args, i)))
		}
		return fn(n), nil
	}
}

// fAt is the i-th number, NaN (undefined in arithmetic) when not passed.
func fAt(n []float64, i int) float64 {
	if i < len(n) {
		return n[i]
	}
	return math.NaN()
}

// fShiftDecimal is LiquidJS's shiftDecimal: the number's string with its
// exponent moved by exp, read back.
func fShiftDecimal(n, exp float64) float64 {
	mant, power, found := strings.Cut(jsvalue.NumberToString(n), "e")
	p := 0.0
	if found {
		p = jsvalue.StringToNumber(power)
	}
	return jsvalue.StringToNumber(mant + "e" + jsvalue.NumberToString(p+exp))
}

// round rounds the absolute value half up at arg decimals, through the
// decimal string, and gives the sign back (-2.5 → -3, 1.005 → 1.01).
func filterRound(c *Context, v any, args []any) (any, error) {
	x := fToNumber(v)
	d := fToNumber(fArg(args, 0))
	scaled := fShiftDecimal(math.Abs(x), d)
	if !(scaled <= 9007199254740991) {
		return x, nil
	}
	r := fShiftDecimal(math.Round(scaled), -d)
	if x < 0 {
		return -r, nil
	}
	return r, nil
}
