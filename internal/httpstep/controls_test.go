package httpstep

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckControls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		controls string
		want     []string // fields with a problem, in order
	}{
		{"minimal", `{"url":"https://crm.example.com/o"}`, nil},
		{"the spec's example", `{"method":"POST","url":"https://crm.example.com/o/{{payload.id}}",
			"headers":[{"key":"X-Plan","value":"{{subscriber.data.plan}}"}],"body":"{\"id\":\"{{payload.id}}\"}",
			"responseBodySchema":{"type":"object","required":["tier"]},"enforceSchemaValidation":true,"continueOnFailure":false,
			"timeout":5000,"skip":{"==":[1,1]}}`, nil},
		{"every method", `{"method":"PATCH","url":"http://x.example"}`, nil},
		{"url from a variable", `{"url":"{{payload.url}}"}`, nil},
		{"url from a variable and a path", `{"url":"{{payload.base}}/hooks/{{payload.id}}"}`, nil},
		{"url starting with a tag", `{"url":"{% if payload.eu %}https://eu.example{% else %}https://us.example{% endif %}"}`, nil},
		{"upper-case scheme", `{"url":"HTTPS://x.example/a"}`, nil},
		{"key-value body", `{"url":"https://x.example","body":[{"key":"a","value":"1"},{"key":"","value":""}]}`, nil},
		{"nulls are absent", `{"url":"https://x.example","method":null,"headers":null,"body":null,"timeout":null,
			"responseBodySchema":null,"enforceSchemaValidation":null,"continueOnFailure":null}`, nil},
		{"unknown keys are ignored", `{"url":"https://x.example","extra":{"x":1},"skip":"not mine"}`, nil},
		{"timeout bounds", `{"url":"https://x.example","timeout":100}`, nil},
		{"timeout upper bound", `{"url":"https://x.example","timeout":30000}`, nil},
		{"a header key from a variable", `{"url":"https://x.example","headers":[{"key":"{{payload.h}}","value":"v"}]}`, nil},

		{"no url", `{}`, []string{"url"}},
		{"empty url", `{"url":"  "}`, []string{"url"}},
		{"url not a string", `{"url":42}`, []string{"url"}},
		{"ftp url", `{"url":"ftp://files.example/x"}`, []string{"url"}},
		{"file url", `{"url":"file:///etc/passwd"}`, []string{"url"}},
		{"javascript url", `{"url":"javascript:alert(1)"}`, []string{"url"}},
		{"relative url", `{"url":"/hooks"}`, []string{"url"}},
		{"url with a space", `{"url":"https://x.example/a b"}`, []string{"url"}},
		{"url without a host", `{"url":"https://"}`, []string{"url"}},
		{"lower-case method", `{"method":"post","url":"https://x.example"}`, []string{"method"}},
		{"HEAD is not in the spec", `{"method":"HEAD","url":"https://x.example"}`, []string{"method"}},
		{"method not a string", `{"method":1,"url":"https://x.example"}`, []string{"method"}},
		{"headers not an array", `{"url":"https://x.example","headers":{"a":"b"}}`, []string{"headers"}},
		{"header value not a string", `{"url":"https://x.example","headers":[{"key":"a","value":"b"},{"key":"c","value":1}]}`, []string{"headers.1.value"}},
		{"header without key", `{"url":"https://x.example","headers":[{"value":"b"}]}`, []string{"headers.0.key"}},
		{"header with another property", `{"url":"https://x.example","headers":[{"key":"a","value":"b","id":"1"}]}`, []string{"headers.0"}},
		{"invalid header name", `{"url":"https://x.example","headers":[{"key":"X Bad","value":"b"}]}`, []string{"headers.0.key"}},
		{"body a number", `{"url":"https://x.example","body":42}`, []string{"body"}},
		{"body an object", `{"url":"https://x.example","body":{"a":1}}`, []string{"body"}},
		{"body pair value not a string", `{"url":"https://x.example","body":[{"key":"a","value":2}]}`, []string{"body.0.value"}},
		{"schema not an object", `{"url":"https://x.example","responseBodySchema":"object"}`, []string{"responseBodySchema"}},
		{"schema that does not compile", `{"url":"https://x.example","responseBodySchema":{"type":"bogus"}}`, []string{"responseBodySchema"}},
		{"schema with a remote ref", `{"url":"https://x.example","responseBodySchema":{"$ref":"https://schemas.example/x.json"}}`, []string{"responseBodySchema"}},
		{"schema with a file ref", `{"url":"https://x.example","responseBodySchema":{"$ref":"file:///etc/passwd"}}`, []string{"responseBodySchema"}},
		{"flags not booleans", `{"url":"https://x.example","enforceSchemaValidation":"true","continueOnFailure":1}`,
			[]string{"enforceSchemaValidation", "continueOnFailure"}},
		{"timeout below the bound", `{"url":"https://x.example","timeout":99}`, []string{"timeout"}},
		{"timeout above the bound", `{"url":"https://x.example","timeout":30001}`, []string{"timeout"}},
		{"timeout a string", `{"url":"https://x.example","timeout":"5000"}`, []string{"timeout"}},
		{"every problem", `{"method":"GET ","url":"gopher://x","headers":[{"key":1,"value":2}],"body":true,"timeout":0,
			"responseBodySchema":[],"continueOnFailure":"no"}`,
			[]string{"method", "url", "headers.0.key", "headers.0.value", "body", "responseBodySchema", "continueOnFailure", "timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var controls map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.controls), &controls))
			var got []string
			for _, e := range CheckControls(controls) {
				require.NotEmpty(t, e.Msg)
				got = append(got, e.Field)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCheckControlsLimits(t *testing.T) {
	t.Parallel()
	pairs := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"key": "k", "value": "v"}
		}
		return out
	}
	long := make([]byte, maxBodyLength+1)
	for i := range long {
		long[i] = ' '
	}
	for _, tc := range []struct {
		name     string
		controls map[string]any
		want     []string
	}{
		{"50 headers", map[string]any{"url": "https://x.example", "headers": pairs(50)}, nil},
		{"51 headers", map[string]any{"url": "https://x.example", "headers": pairs(51)}, []string{"headers"}},
		{"101 body pairs", map[string]any{"url": "https://x.example", "body": pairs(101)}, []string{"body"}},
		{"body too long", map[string]any{"url": "https://x.example", "body": string(long)}, []string{"body"}},
		{"url too long", map[string]any{"url": "https://x.example/" + string(long[:maxURLLength])}, []string{"url"}},
		{"typed pairs", map[string]any{"url": "https://x.example", "headers": []map[string]string{{"key": "a", "value": "b"}}}, nil},
		{"an integer timeout", map[string]any{"url": "https://x.example", "timeout": 250}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, e := range CheckControls(tc.controls) {
				got = append(got, e.Field)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func FuzzCheckControls(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://x.example","method":"GET"}`,
		`{"url":"{{payload.url}}","headers":[{"key":"a","value":"b"}],"body":"{\"a\":1}"}`,
		`{"url":"ftp://x","body":[{"key":"a","value":"b"}],"timeout":5000}`,
		`{"url":"https://x","responseBodySchema":{"type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"pattern":"^a+$"}}}}`,
		`{"responseBodySchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"a":{"$dynamicAnchor":"x"}}}}`,
		`{"responseBodySchema":{"$id":"http://evil.example/s","allOf":[{"$ref":"other"}]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var controls map[string]any
		if json.Unmarshal([]byte(s), &controls) != nil {
			return
		}
		for _, e := range CheckControls(controls) {
			if e.Field == "" || e.Msg == "" {
				t.Fatalf("an empty field error %+v for %s", e, s)
			}
		}
	})
}
