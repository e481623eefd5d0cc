package httpstep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/jsvalue"
	"github.com/herald-notify/herald/internal/secret"
)

// FuzzBuild builds requests from arbitrary rendered controls and checks
// that a request is either refused with a reason or is one that goes on the
// wire as built: a JSON object or array body on methods that carry one,
// the header the step set, and a signature over the bytes sent.
func FuzzBuild(f *testing.F) {
	for _, s := range []struct {
		method, url, key, value, body string
		pairs                         bool
	}{
		{"POST", "https://hooks.example/x", "X-Plan", "gold", `{"id":"1"}`, false},
		{"GET", "http://hooks.example", "Accept", "*/*", `[1,2]`, false},
		{"PUT", "https://hooks.example/a?b=c", "", "", `{"a":{"b":[1.0,1e400,"\u2028"]}}`, false},
		{"PATCH", "https://hooks.example", "X-A", "v", `{"k":"v"}`, true},
		{"DELETE", "ftp://x", "X Bad", "v\r\n", `{`, false},
		{"post", "https://hooks.example", "Host", "virtual.example", `"str"`, false},
	} {
		f.Add(s.method, s.url, s.key, s.value, s.body, s.pairs)
	}
	f.Fuzz(func(t *testing.T, method, rawURL, key, value, body string, pairs bool) {
		controls := map[string]any{"method": method, "url": rawURL,
			"headers": []any{map[string]any{"key": key, "value": value}}}
		if pairs {
			controls["body"] = []any{map[string]any{"key": key, "value": body}, map[string]any{"key": body, "value": value}}
		} else {
			controls["body"] = body
		}
		req, sent, fail := build(Request{Controls: controls, SigningKey: testKey, Now: testNow})
		if fail != "" {
			if req != nil || sent != nil {
				t.Fatalf("a refusal (%s) came with a request", fail)
			}
			return
		}
		if req == nil || !isMethod(req.Method) {
			t.Fatalf("no request or a bad method for %q", method)
		}
		if sent != nil {
			if req.Method == "GET" || req.Method == "DELETE" {
				t.Fatalf("a body on %s", req.Method)
			}
			if !json.Valid(sent) || (sent[0] != '{' && sent[0] != '[') {
				t.Fatalf("body %q is not a JSON object or array", sent)
			}
			v, err := jsvalue.ParseJSON(string(sent))
			if err != nil || !bytes.Equal(jsvalue.Stringify(v), sent) {
				t.Fatalf("body %q does not read back the same (%v)", sent, err)
			}
			if req.Header.Get("Content-Type") == "" {
				t.Fatal("a body without Content-Type")
			}
		}
		signed := sent
		if signed == nil {
			signed = []byte("{}")
		}
		if got, want := req.Header.Get(signatureHeader), secret.NovuSignature(testKey, testNow, signed); got != want {
			t.Fatalf("signature %q, want %q", got, want)
		}

		// On the wire and back.
		var wire bytes.Buffer
		if err := req.Write(&wire); err != nil {
			t.Fatalf("the request cannot be written: %v", err)
		}
		back, err := http.ReadRequest(bufio.NewReader(&wire))
		if err != nil {
			t.Fatalf("the request does not read back: %v\n%s", err, wire.String())
		}
		gotBody, _ := io.ReadAll(back.Body)
		if !bytes.Equal(gotBody, sent) {
			t.Fatalf("body %q went as %q", sent, gotBody)
		}
		if back.Header.Get(signatureHeader) != req.Header.Get(signatureHeader) {
			t.Fatal("the signature did not survive the wire")
		}
		if key != "" && !strings.EqualFold(key, "Host") && !isDefaulted(key) {
			if got := back.Header.Get(key); got != strings.Trim(value, " \t") {
				t.Fatalf("header %q: %q went as %q", key, value, got)
			}
		}
	})
}

// isDefaulted reports headers whose value build or the wire may set.
func isDefaulted(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Novu-Signature", "Content-Length", "Transfer-Encoding", "Trailer", "Connection", "User-Agent":
		return true
	}
	return false
}

// FuzzAnswered reads arbitrary answers and checks the Result stays usable:
// raw JSON of bounded size, valid UTF-8, a failure for a failed status.
func FuzzAnswered(f *testing.F) {
	f.Add(200, []byte(`{"tier":"gold"}`), true, `{"type":"object","required":["tier"]}`)
	f.Add(500, []byte(`{"error":"x"}`), false, `{}`)
	f.Add(200, []byte("\x00\x01\xff\u2028<>&\"\\"), true, `{"type":"string"}`)
	f.Add(302, []byte(strings.Repeat("\x01", 3*maxRaw)), false, ``)
	f.Add(200, []byte(`[`+strings.Repeat(`"\u0001",`, 300)+`1]`), true, `{"items":{"type":"string"}}`)
	f.Fuzz(func(t *testing.T, status int, data []byte, enforce bool, schema string) {
		controls := map[string]any{"enforceSchemaValidation": enforce}
		var m map[string]any
		if json.Unmarshal([]byte(schema), &m) == nil && m != nil {
			controls["responseBodySchema"] = m
		}
		res := answered("POST https://hooks.example/x", status, data, controls)
		if !json.Valid([]byte(res.Raw)) || !utf8.ValidString(res.Raw) || !utf8.ValidString(res.BodyText) {
			t.Fatalf("raw %q is not valid JSON text", res.Raw)
		}
		var raw struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal([]byte(res.Raw), &raw); err != nil || len(raw.Body) > maxRaw {
			t.Fatalf("raw body of %d bytes (%v)", len(raw.Body), err)
		}
		if len(res.BodyText) > maxRaw {
			t.Fatalf("body text of %d bytes", len(res.BodyText))
		}
		if status >= 400 && res.Failure == "" {
			t.Fatalf("status %d without failure", status)
		}
		if res.Failure == "" && enforce && controls["responseBodySchema"] != nil && res.Body == nil && strings.TrimSpace(string(data)) != "null" {
			t.Fatal("a schema was enforced on a body that is not JSON")
		}
		_ = res.Output()
	})
}
