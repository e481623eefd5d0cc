package jsvalue

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The expectations are what Node.js prints for
// JSON.stringify(JSON.parse(in)) and String(x).

func TestJSONNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   float64
		want string
	}{
		{"integer", 42, "42"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"fraction", 1.5, "1.5"},
		{"tenth", 0.1, "0.1"},
		{"small decimal", 0.000001, "0.000001"},
		{"exponent below 1e-6", 1e-7, "1e-7"},
		{"large integer", 1e20, "100000000000000000000"},
		{"exponent from 1e21", 1e21, "1e+21"},
		{"big with digits", 1.2345678901234569e+23, "1.2345678901234569e+23"},
		{"rounded big integer", 12345678901234567890, "12345678901234567000"},
		{"max", math.MaxFloat64, "1.7976931348623157e+308"},
		{"min subnormal", 5e-324, "5e-324"},
		{"scaled", 123e-20, "1.23e-18"},
		{"negative", -2.5e-8, "-2.5e-8"},
		{"infinity", math.Inf(1), "null"},
		{"nan", math.NaN(), "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, JSONNumber(tc.in))
		})
	}
}

func TestStringifyParsed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"keeps key order", `{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{"array indices first", `{"b":1,"2":2,"1":3,"a":4}`, `{"1":3,"2":2,"b":1,"a":4}`},
		{"index bounds", `{"01":1,"4294967295":3,"4294967294":4,"1":2}`, `{"1":2,"4294967294":4,"01":1,"4294967295":3}`},
		{"duplicate key keeps first place and last value", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"spaces go", " { \"a\" : [ 1 , { } , [ ] ] }\n", `{"a":[1,{},[]]}`},
		{"numbers as JavaScript writes them", `[1.0,1e2,1E-7,0.000001,123456789012345678901234,-0,1e21,1e400,-1e400]`,
			`[1,100,1e-7,0.000001,1.2345678901234569e+23,0,1e+21,null,null]`},
		{"strings escape only what JSON must", `["<a&b>", "\u2028", "\u0001\u001f", "\/", "\u00e9", "tab\there"]`,
			"[\"<a&b>\",\"\u2028\",\"\\u0001\\u001f\",\"/\",\"é\",\"tab\\there\"]"},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"nested", `{"a":{"b":[{"c":"d"}]}}`, `{"a":{"b":[{"c":"d"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := ParseJSON(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(Stringify(v)))
		})
	}
}

func TestParseJSONRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in string }{
		{"empty", ``},
		{"trailing data", `{"a":1} x`},
		{"two values", `{} {}`},
		{"trailing comma", `[1,]`},
		{"unquoted key", `{a:1}`},
		{"single quotes", `{'a':1}`},
		{"unclosed", `{"a":1`},
		{"too deep", deep(maxDepth + 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJSON(tc.in)
			require.Error(t, err)
		})
	}
}

func deep(n int) string {
	b := make([]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		b = append(b, '[')
	}
	for i := 0; i < n; i++ {
		b = append(b, ']')
	}
	return string(b)
}

func TestStringifyInvalidUTF8(t *testing.T) {
	t.Parallel()
	obj := NewObject()
	obj.Set("k", "a\xffb")
	require.Equal(t, "{\"k\":\"a\uFFFDb\"}", string(Stringify(obj)))
}

func TestObject(t *testing.T) {
	t.Parallel()
	obj := NewObject()
	obj.Set("b", 1.0)
	obj.Set("10", "ten")
	obj.Set("2", "two")
	obj.Set("b", 2.0)
	require.Equal(t, []string{"2", "10", "b"}, obj.Keys())
	require.Equal(t, 3, obj.Len())
	v, ok := obj.Get("b")
	require.True(t, ok)
	require.Equal(t, 2.0, v)
	_, ok = obj.Get("a")
	require.False(t, ok)
}

// FuzzStringify checks that whatever Stringify writes for a parsed text
// is valid JSON and a fixed point: parsed and written again, the same bytes
// (what a bridge's JSON.stringify(JSON.parse(body)) must give back).
func FuzzStringify(f *testing.F) {
	for _, s := range []string{`{"b":1,"2":2,"1":3,"a":4}`, `["<a&b>","\u2028\u2029","\ud800",1e400,-0,5e-324]`,
		`{"a":{"a":{"10":[],"9":{}}},"a":null}`, `"\u0000\u001f\u007f"`, "\"\xff\"", `12345678901234567890`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParseJSON(in)
		if err != nil {
			return
		}
		out := Stringify(v)
		if !json.Valid(out) {
			t.Fatalf("%q wrote invalid JSON %q", in, out)
		}
		back, err := ParseJSON(string(out))
		if err != nil {
			t.Fatalf("%q wrote %q, which does not parse: %v", in, out, err)
		}
		if again := Stringify(back); !bytes.Equal(again, out) {
			t.Fatalf("%q wrote %q, then %q", in, out, again)
		}
	})
}
