package sandbox

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzRender renders arbitrary templates over arbitrary payloads: a render
// returns (never panics out), stays within its output limit, and fails only
// with a *sandbox.Error.
func FuzzRender(f *testing.F) {
	for _, seed := range []struct{ src, payload string }{
		{"Hi {{ subscriber.firstName | upcase }}", `{}`},
		{"{% for i in (1..payload.n) %}{{ i | times: 2 }}{% endfor %}", `{"n": 1e9}`},
		{"{{ payload.s | slice: 5 }}{{ payload.s | slice: 1, -5 }}", `{"s": "abc"}`},
		{"{{ payload.a | uniq | sort | join: payload.sep }}", `{"a": [null, {"x": 1}, [1], 2, "2"], "sep": ","}`},
		{"{% assign s = payload.s %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}", `{"s": "ab"}`},
		{"{% capture c %}{% for i in (1..9) %}{% cycle 'a','b' %}{% endfor %}{% endcapture %}{{ c }}", `{}`},
		{"{% tablerow i in payload.a cols: payload.c %}{{ i }}{% endtablerow %}", `{"a": [1,2,3], "c": 0}`},
		{"{% case payload.k %}{% when 1 %}a{% else %}b{% endcase %}{{ 1 | divided_by: 0 }}", `{"k": 1}`},
		{"{{ payload.d | date: '%Y-%m-%d %H:%M %Z %%' }}{{ 7 | modulo: 0 }}", `{"d": "2026-01-02"}`},
		{"{{ payload.t | truncate: payload.n, '…' }}{{ payload.t | truncatewords: -3 }}", `{"t": "a b c d", "n": -1}`},
	} {
		f.Add(seed.src, seed.payload)
	}
	s := New(Limits{Timeout: 50 * time.Millisecond, MaxIterations: 20_000, MaxOutput: 4096, MaxValue: 64 << 10, MaxWork: 1 << 20})
	f.Fuzz(func(t *testing.T, src, payload string) {
		var p any
		if json.Unmarshal([]byte(payload), &p) != nil {
			p = payload
		}
		start := time.Now()
		out, err := s.Render(src, map[string]any{"payload": p, "subscriber": map[string]any{"firstName": "Ada"}})
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("%q: a render with a 50 ms budget took %s", src, d)
		}
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %T %v is not a *sandbox.Error", src, err, err)
			}
			return
		}
		if len(out) > 4096 {
			t.Fatalf("%q: output of %d bytes passed the 4096-byte limit", src, len(out))
		}
	})
}
