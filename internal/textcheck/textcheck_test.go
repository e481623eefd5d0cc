package textcheck_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/textcheck"
)

func TestText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", nil},
		{"ASCII", "user-1 |:@+/", nil},
		{"multibyte", "café 🚀 \uFFFD \U0010FFFF", nil},
		{"NUL", "a\x00b", textcheck.ErrNUL},
		{"lone continuation byte", "a\x80", textcheck.ErrNotUTF8},
		{"truncated sequence", "\xe2\x82", textcheck.ErrNotUTF8},
		{"UTF-8 encoded surrogate", "\xed\xa0\x80", textcheck.ErrNotUTF8},
		{"overlong slash", "\xc0\xaf", textcheck.ErrNotUTF8},
		{"0xFF", "\xff", textcheck.ErrNotUTF8},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, textcheck.Text(c.in))
		})
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	type problem struct {
		path string // joined with "."
		err  error
	}
	for _, c := range []struct {
		name    string
		in      string
		want    []problem
		notJSON bool
	}{
		{name: "object", in: `{"a":[1,-2.5e3,true,false,null,"x",{}],"b":{"c":"\u00e9\ud83d\ude00\n"}}`},
		{name: "top-level scalars", in: ` "x" `},
		{name: "U+FFFD written out is text", in: `["\ufffd","` + "\uFFFD" + `"]`},
		{name: "largest float", in: `[1.7976931348623157e308,-1.7976931348623157e308,5e-324,0e-999,-0.0,0.000]`},
		{name: "NUL escape", in: `{"a":{"b":["ok","x\u0000"]}}`, want: []problem{{"a.b.1", textcheck.ErrNUL}}},
		{name: "NUL in a key", in: `{"a":{"k\u0000":1}}`, want: []problem{{"a.k\x00", textcheck.ErrNUL}}},
		{name: "lone high surrogate", in: `{"a":"\ud800"}`, want: []problem{{"a", textcheck.ErrSurrogate}}},
		{name: "high surrogate then a letter", in: `{"a":"\uD800\u0041"}`, want: []problem{{"a", textcheck.ErrSurrogate}}},
		{name: "two high surrogates", in: `["\ud800\ud800\udc00"]`, want: []problem{{"0", textcheck.ErrSurrogate}}},
		{name: "lone low surrogate", in: `["\udfff"]`, want: []problem{{"0", textcheck.ErrSurrogate}}},
		{name: "surrogate at the end", in: `"\ud83d"`, want: []problem{{"", textcheck.ErrSurrogate}}},
		{name: "invalid UTF-8", in: "{\"a\":[{\"b\":\"\xff\"}]}", want: []problem{{"a.0.b", textcheck.ErrNotUTF8}}},
		{name: "invalid UTF-8 in a key", in: "{\"\xc3\":1}", want: []problem{{"\xc3", textcheck.ErrNotUTF8}}},
		{name: "huge exponent", in: `{"f":{"x":1e131072}}`, want: []problem{{"f.x", textcheck.ErrNumber}}},
		{name: "beyond float64", in: `[1e309,-1.8e308]`, want: []problem{{"0", textcheck.ErrNumber}, {"1", textcheck.ErrNumber}}},
		{name: "rounds to zero", in: `[1e-400]`, want: []problem{{"0", textcheck.ErrNumber}}},
		{name: "too long", in: `[1.` + strings.Repeat("0", 100) + `]`, want: []problem{{"0", textcheck.ErrNumber}}},
		{name: "every problem", in: `{"a":"\u0000","b":1e999,"c":["\udc00"]}`,
			want: []problem{{"a", textcheck.ErrNUL}, {"b", textcheck.ErrNumber}, {"c.0", textcheck.ErrSurrogate}}},
		{name: "depth at the limit", in: strings.Repeat("[", 8) + strings.Repeat("]", 8)},
		{name: "too deep", in: strings.Repeat(`{"k":`, 9) + "1" + strings.Repeat("}", 9),
			want: []problem{{"k.k.k.k.k.k.k.k", textcheck.ErrDepth}}},
		{name: "very deep", in: strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000),
			want: []problem{{"0.0.0.0.0.0.0.0", textcheck.ErrDepth}}},
		{name: "problem below the depth limit", in: strings.Repeat("[", 12) + `"\u0000"` + strings.Repeat("]", 12),
			want: []problem{{"0.0.0.0.0.0.0.0", textcheck.ErrDepth}, {"0.0.0.0.0.0.0.0", textcheck.ErrNUL}}},

		{name: "empty", in: ``, notJSON: true},
		{name: "two values", in: `{} {}`, notJSON: true},
		{name: "unclosed", in: `{"a":[1,2}`, notJSON: true},
		{name: "trailing comma", in: `[1,]`, notJSON: true},
		{name: "raw control character", in: "[\"a\x01\"]", notJSON: true},
		{name: "bad escape", in: `["\x"]`, notJSON: true},
		{name: "short unicode escape", in: `["\u12"]`, notJSON: true},
		{name: "leading zero", in: `[01]`, notJSON: true},
		{name: "bare minus", in: `[-]`, notJSON: true},
		{name: "NaN", in: `[NaN]`, notJSON: true},
		{name: "invalid UTF-8 outside strings", in: "\xff{}", notJSON: true},
		{name: "a NUL problem in a broken document", in: `{"a":"\u0000"`, notJSON: true},
		{name: "single quotes", in: `{'a':1}`, notJSON: true},
		{name: "deep and broken", in: strings.Repeat("[", 100), notJSON: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := textcheck.JSON([]byte(c.in), 8)
			if c.notJSON {
				require.ErrorIs(t, err, textcheck.ErrNotJSON)
				require.False(t, json.Valid([]byte(c.in)))
				return
			}
			require.NoError(t, err)
			var have []problem
			for _, p := range got {
				have = append(have, problem{strings.Join(p.Path, "."), p.Err})
			}
			require.Equal(t, c.want, have)
		})
	}
}

func TestJSONReportsAtMost100Problems(t *testing.T) {
	t.Parallel()
	in := "[" + strings.Repeat(`"\u0000",`, 1000) + "1]"
	got, err := textcheck.JSON([]byte(in), 64)
	require.NoError(t, err)
	require.Len(t, got, 100)
	require.Equal(t, `\u0000`, got[0].Value, "the token as sent")
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "a", "\x00", "\xff", "é", "\xed\xa0\x80", "\U0001F680"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := utf8.ValidString(s) && !strings.Contains(s, "\x00")
		require.Equal(t, want, textcheck.Text(s) == nil, "%q", s)
	})
}

// FuzzJSON checks the validator against encoding/json and an independent
// reading of the rules PostgreSQL's jsonb imposes:
//
//	go test -run='^$' -fuzz=FuzzJSON -fuzztime=5m ./internal/textcheck/
func FuzzJSON(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `"x"`, `0`, `-0.0e+0`, `{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00"}`,
		`{"a":"\u0000"}`, `{"\u0000":1}`, `["\ud800"]`, `["\udc00\ud800"]`, `["\ud800\u0041"]`, `["\uD83D\uDE00"]`,
		"[\"\xff\"]", "{\"\xc3\":1}", "[\"\xed\xa0\x80\"]", `["\ufffd"]`, "[\"\xef\xbf\xbd\"]",
		`[1e131072]`, `[1e308]`, `[1e309]`, `[1e-400]`, `[5e-324]`, `[2.4703282292062328e-324]`,
		`[0.` + strings.Repeat("0", 98) + `1]`, `[12345678901234567890123]`,
		strings.Repeat("[", 65) + strings.Repeat("]", 65), strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
		`{"a":1,}`, `[1 2]`, `{"a" 1}`, `tru`, `nul`, `"\u12`, `{"a":"b"} x`, " \t\r\n{}\n",
	} {
		f.Add([]byte(seed))
	}
	const maxDepth = 64
	f.Fuzz(func(t *testing.T, b []byte) {
		problems, err := textcheck.JSON(b, maxDepth)
		if err != nil {
			require.ErrorIs(t, err, textcheck.ErrNotJSON)
			require.Nil(t, problems)
			require.False(t, json.Valid(b), "valid JSON refused as not JSON: %q", b)
			return
		}
		tooDeep := false
		for _, p := range problems {
			require.Contains(t, []error{textcheck.ErrNotUTF8, textcheck.ErrNUL, textcheck.ErrSurrogate,
				textcheck.ErrNumber, textcheck.ErrDepth}, p.Err)
			require.LessOrEqual(t, len(p.Path), maxDepth+1)
			tooDeep = tooDeep || p.Err == textcheck.ErrDepth
		}
		if tooDeep {
			return // encoding/json stops at 10,000 levels; nothing more to compare
		}
		require.True(t, json.Valid(b), "accepted as JSON: %q", b)
		bad, fffd := reference(t, b, maxDepth)
		literalFFFD := bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`))
		if len(problems) == 0 {
			require.True(t, utf8.Valid(b), "accepted: %q", b)
			require.Empty(t, bad, "accepted: %q", b)
			if !literalFFFD {
				require.False(t, fffd, "accepted text was replaced by U+FFFD: %q", b)
			}
			// What the server stores after decoding is accepted again.
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var v any
			require.NoError(t, dec.Decode(&v))
			again, err := json.Marshal(v)
			require.NoError(t, err)
			p2, err := textcheck.JSON(again, maxDepth)
			require.NoError(t, err)
			require.Empty(t, p2, "re-encoded %q", again)
			return
		}
		if !literalFFFD {
			require.True(t, bad != "" || fffd, "refused %q (%v) but encoding/json reads it fine", b, problems)
		}
	})
}

// reference reads every token of a valid document with encoding/json (so
// that a value hidden by a repeated key is read too) and names the first
// thing PostgreSQL's jsonb would refuse (NUL, a number beyond numeric or
// float) or that is too deep; fffd reports text encoding/json replaced (or
// that held U+FFFD already).
func reference(t *testing.T, b []byte, maxDepth int) (bad string, fffd bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return bad, fffd
		}
		require.NoError(t, err)
		if bad != "" {
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				if depth++; depth > maxDepth {
					bad = "deep"
				}
			} else {
				depth--
			}
		case string:
			fffd = fffd || strings.ContainsRune(v, utf8.RuneError)
			if strings.ContainsRune(v, 0) {
				bad = "NUL"
			}
		case json.Number:
			bad = numberProblem(string(v))
		}
	}
}

func numberProblem(s string) string {
	if len(s) > textcheck.MaxNumberLen {
		return "long number"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "number beyond float64"
	}
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	if f == 0 && strings.Trim(mantissa, "-0.") != "" {
		return "number rounding to zero"
	}
	return ""
}
