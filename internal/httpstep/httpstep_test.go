package httpstep

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/stretchr/testify/require"
)

const testKey = "sk_test_5f0c2e8a9b7d4c1e"

var testNow = time.UnixMilli(1767225600123)

// got is a request as the test server saw it.
type got struct {
	Method, Path, Host string
	Header             http.Header
	Body               []byte
}

// recorder is a loopback server that records requests and answers with
// answer (200 {"ok":true} when nil).
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []got
}

func record(t *testing.T, answer http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, got{r.Method, r.URL.Path, r.Host, r.Header.Clone(), b})
		rec.mu.Unlock()
		if answer == nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		}
		answer(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) requests() []got {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]got(nil), r.reqs...)
}

// local is a client that may reach loopback test servers.
func local() *Client { return New(&netguard.Dialer{AllowPrivate: true}) }

func send(c *Client, controls map[string]any) Result {
	return c.Do(context.Background(), Request{Controls: controls, SigningKey: testKey, Now: testNow})
}

// requireSigned recomputes the novu-signature the way a receiver does.
func requireSigned(t *testing.T, g got) {
	t.Helper()
	sig := g.Header.Get("Novu-Signature")
	ts, mac, ok := strings.Cut(sig, ",v1=")
	require.True(t, ok, sig)
	ts = strings.TrimPrefix(ts, "t=")
	require.Equal(t, strconv.FormatInt(testNow.UnixMilli(), 10), ts)
	signed := g.Body
	if len(signed) == 0 {
		signed = []byte("{}")
	}
	m := hmac.New(sha256.New, []byte(testKey))
	m.Write([]byte(ts + "." + string(signed)))
	require.Equal(t, hex.EncodeToString(m.Sum(nil)), mac)
}

func TestMethodsAndBodies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		controls map[string]any
		method   string
		body     string // "" when none is sent
	}{
		{"default POST with a JSON body", map[string]any{"body": `{"id":"42","n":1.50,"z":null,"a":[1,2]}`},
			"POST", `{"id":"42","n":1.5,"z":null,"a":[1,2]}`},
		{"PUT", map[string]any{"method": "PUT", "body": `[{"a":1}]`}, "PUT", `[{"a":1}]`},
		{"PATCH", map[string]any{"method": "PATCH", "body": `{"b":1,"a":2}`}, "PATCH", `{"b":1,"a":2}`},
		{"GET sends no body", map[string]any{"method": "GET", "body": `{"a":1}`}, "GET", ""},
		{"DELETE sends no body", map[string]any{"method": "DELETE", "body": `{"a":1}`}, "DELETE", ""},
		{"POST without body", map[string]any{"method": "POST"}, "POST", ""},
		{"blank body", map[string]any{"body": " \n "}, "POST", ""},
		{"key-value body", map[string]any{"body": []any{
			map[string]any{"key": "b", "value": "1"},
			map[string]any{"key": "", "value": "dropped"},
			map[string]any{"key": "a", "value": "<2>"},
			map[string]any{"key": "b", "value": "3"},
		}}, "POST", `{"b":"3","a":"<2>"}`},
		{"key-value body of empty keys", map[string]any{"body": []any{map[string]any{"key": "", "value": "x"}}}, "POST", `{}`},
		{"no key-value pairs", map[string]any{"body": []any{}}, "POST", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := record(t, nil)
			tc.controls["url"] = srv.URL + "/hook?x=1"
			res := send(local(), tc.controls)
			require.Empty(t, res.Failure)
			require.Equal(t, 200, res.StatusCode)
			require.Equal(t, `{"statusCode":200,"body":{"ok":true}}`, res.Raw)
			require.Equal(t, map[string]any{"ok": true}, res.Output())

			reqs := srv.requests()
			require.Len(t, reqs, 1)
			g := reqs[0]
			require.Equal(t, tc.method, g.Method)
			require.Equal(t, "/hook", g.Path)
			require.Equal(t, tc.body, string(g.Body))
			if tc.body == "" {
				require.Empty(t, g.Header.Get("Content-Type"))
			} else {
				require.Equal(t, "application/json", g.Header.Get("Content-Type"))
			}
			requireSigned(t, g)
		})
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	srv := record(t, nil)
	res := send(local(), map[string]any{
		"url": srv.URL,
		"headers": []any{
			map[string]any{"key": "X-Plan", "value": "gold"},
			map[string]any{"key": "", "value": "dropped"},
			map[string]any{"key": "x-plan", "value": "platinum"},
			map[string]any{"key": "Content-Type", "value": "application/vnd.api+json"},
			map[string]any{"key": "Authorization", "value": "Bearer t"},
		},
		"body": `{"a":1}`,
	})
	require.Empty(t, res.Failure)
	g := srv.requests()[0]
	require.Equal(t, []string{"platinum"}, g.Header.Values("X-Plan"), "a later key replaces an earlier one")
	require.Equal(t, "application/vnd.api+json", g.Header.Get("Content-Type"), "the step's Content-Type wins")
	require.Equal(t, "Bearer t", g.Header.Get("Authorization"))
	requireSigned(t, g)

	unsigned := record(t, nil)
	res = local().Do(context.Background(), Request{Controls: map[string]any{"url": unsigned.URL}})
	require.Empty(t, res.Failure)
	require.Empty(t, unsigned.requests()[0].Header.Values("Novu-Signature"), "no key, no signature")
}

func TestRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	srv := record(t, nil)
	for _, tc := range []struct {
		name     string
		controls map[string]any
		failure  string
	}{
		{"invalid header name", map[string]any{"headers": []any{map[string]any{"key": "X Bad:", "value": "v"}}},
			`The header name "X Bad:" is not a valid HTTP header name`},
		{"header value with a line break", map[string]any{"headers": []any{map[string]any{"key": "X-A", "value": "v\r\nX-B: injected"}}},
			"The value of header X-A holds a line break or another control character"},
		{"invalid JSON body", map[string]any{"body": `{"id": {{payload.id}}}`}, "The body is not a JSON object or array: "},
		{"JSON body that is a number", map[string]any{"body": `42`}, "The body is not a JSON object or array: it is a number"},
		{"JSON body that is a string", map[string]any{"body": `"hi"`}, "The body is not a JSON object or array: it is a string"},
		{"invalid JSON body on a GET too", map[string]any{"method": "GET", "body": `{`}, "The body is not a JSON object or array: "},
		{"unknown method", map[string]any{"method": "TRACE"}, `The method "TRACE" is not one of GET, POST, PUT, DELETE, PATCH`},
		{"bad timeout", map[string]any{"timeout": -1}, "The timeout -1 is not a number of milliseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.controls["url"] = srv.URL
			res := send(local(), tc.controls)
			require.True(t, strings.HasPrefix(res.Failure, tc.failure), res.Failure)
			require.Zero(t, res.StatusCode)
			require.JSONEq(t, `{"error":`+strconv.Quote(res.Failure)+`}`, res.Raw)
			require.Equal(t, map[string]any{}, res.Output())
		})
	}
	require.Empty(t, srv.requests(), "nothing was sent")
}

func TestURLMustBeHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, url, failure string }{
		{"ftp", "ftp://files.example/x", `The URL "ftp://files.example/x" is not http or https`},
		{"file", "file:///etc/passwd", `The URL "file:///etc/passwd" is not http or https`},
		{"rendered to nothing", " ", "The HTTP request step has no URL"},
		{"relative", "/hooks", `The URL "/hooks" is not http or https`},
		{"no host", "http:///x", `The URL "http:///x" has no host`},
		{"credentials", "https://user:pw@hooks.example/x", "The URL https://user:xxxxx@hooks.example/x carries credentials, which are not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The dialer fails the test if anything is dialed.
			c := New(&netguard.Dialer{Dial: noDial(t), Resolve: noResolve(t)})
			res := send(c, map[string]any{"url": tc.url})
			require.Equal(t, tc.failure, res.Failure)
			require.Zero(t, res.StatusCode)
		})
	}
}

func TestFailedStatusKeepsTheBody(t *testing.T) {
	t.Parallel()
	srv := record(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		_, _ = io.WriteString(w, `{"error": "boom <&>"}`)
	})
	res := send(local(), map[string]any{"url": srv.URL + "/y"})
	require.Equal(t, "POST "+srv.URL+"/y answered 500", res.Failure)
	require.Equal(t, 500, res.StatusCode)
	require.Equal(t, map[string]any{"error": "boom <&>"}, res.Body)
	require.Equal(t, `{"statusCode":500,"body":{"error":"boom <&>"}}`, res.Raw)
	require.Equal(t, map[string]any{}, res.Output(), "a failed step's output is empty")
	require.Len(t, srv.requests(), 1, "no retry")
}

func TestResponseBodies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer string
		body   any
		raw    string
		output map[string]any
	}{
		{"object", `{"tier":"gold","n":1}`, map[string]any{"tier": "gold", "n": 1.0},
			`{"statusCode":200,"body":{"tier":"gold","n":1}}`, map[string]any{"tier": "gold", "n": 1.0}},
		{"array", `[1,2]`, []any{1.0, 2.0}, `{"statusCode":200,"body":[1,2]}`, map[string]any{}},
		{"text", `OK`, nil, `{"statusCode":200,"body":"OK"}`, map[string]any{}},
		{"empty", ``, nil, `{"statusCode":200,"body":""}`, map[string]any{}},
		{"spaced JSON is compacted in raw", "{ \"b\" : 1,\n \"a\": 2 }", map[string]any{"a": 2.0, "b": 1.0},
			`{"statusCode":200,"body":{"b":1,"a":2}}`, map[string]any{"a": 2.0, "b": 1.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := record(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, tc.answer) })
			res := send(local(), map[string]any{"url": srv.URL})
			require.Empty(t, res.Failure)
			require.Equal(t, tc.body, res.Body)
			require.Equal(t, tc.answer, res.BodyText)
			require.Equal(t, tc.raw, res.Raw)
			require.Equal(t, tc.output, res.Output())
		})
	}
}

func TestBigResponses(t *testing.T) {
	t.Parallel()
	big := `["` + strings.Repeat("é", 30<<10) + `"]` // 60 KiB of JSON
	srv := record(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, big) })
	res := send(local(), map[string]any{"url": srv.URL})
	require.Empty(t, res.Failure)
	require.Equal(t, []any{strings.Repeat("é", 30<<10)}, res.Body, "the output is the whole body")
	require.LessOrEqual(t, len(res.BodyText), maxRaw)
	require.True(t, strings.HasPrefix(big, res.BodyText))
	var raw struct {
		StatusCode int
		Body       string
	}
	require.NoError(t, json.Unmarshal([]byte(res.Raw), &raw), "raw stays JSON")
	require.Equal(t, 200, raw.StatusCode)
	require.True(t, strings.HasSuffix(raw.Body, "... [truncated]"))
	require.LessOrEqual(t, len(raw.Body), maxRaw)
	require.Less(t, len(res.Raw), maxRaw+100)

	huge := record(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", maxResponse+10))
	})
	res = send(local(), map[string]any{"url": huge.URL})
	require.Equal(t, "POST "+huge.URL+" answered 200 with a body of more than 1 MiB", res.Failure)
	require.Equal(t, 200, res.StatusCode)
	require.Len(t, res.BodyText, maxRaw)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	srv := record(t, func(w http.ResponseWriter, r *http.Request) {
		select { // past the step's 100 ms, bounded
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	start := time.Now()
	res := send(local(), map[string]any{"url": srv.URL + "/slow", "timeout": 100})
	require.Less(t, time.Since(start), 2*time.Second)
	require.Equal(t, "POST "+srv.URL+"/slow timed out after 100 ms", res.Failure)
	require.Zero(t, res.StatusCode)
	require.JSONEq(t, `{"error":"POST `+srv.URL+`/slow timed out after 100 ms"}`, res.Raw)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = local().Do(ctx, Request{Controls: map[string]any{"url": srv.URL}})
	require.Equal(t, "POST "+srv.URL+" was canceled: context canceled", res.Failure)
}

func TestNetworkErrorNamesTheCause(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close() // no answer at all
		}
	}))
	t.Cleanup(srv.Close)
	res := send(local(), map[string]any{"url": srv.URL + "/" + testKey[:6], "headers": []any{
		map[string]any{"key": "X-Key", "value": testKey},
	}})
	require.True(t, strings.HasPrefix(res.Failure, "POST "+srv.URL+"/sk_tes failed: "), res.Failure)
	require.Contains(t, res.Failure, "EOF")
	require.NotContains(t, res.Failure, testKey)
	require.NotContains(t, res.Raw, testKey)
}

func TestResponseSchema(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type":     "object",
		"required": []any{"tier"},
		"properties": map[string]any{
			"tier":  map[string]any{"type": "string", "enum": []any{"gold", "silver"}},
			"email": map[string]any{"type": "string", "format": "email"},
		},
	}
	for _, tc := range []struct {
		name    string
		answer  string
		enforce any
		failure string
	}{
		{"passes", `{"tier":"gold","email":"a@b.example"}`, true, ""},
		{"missing property", `{"email":"a@b.example"}`, true, "Response schema validation failed: (root): missing property 'tier'"},
		{"two errors", `{"tier":"bronze","email":"nope"}`, true,
			"Response schema validation failed: /email: 'nope' is not valid email: missing @; /tier: value must be one of 'gold', 'silver'"},
		{"not JSON", `tier=gold`, true, "Response schema validation failed: (root): the response body is not JSON"},
		{"wrong type", `["gold"]`, true, "Response schema validation failed: (root): got array, want object"},
		{"not enforced", `{"tier":"bronze"}`, false, ""},
		{"enforcement absent", `[]`, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := record(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, tc.answer) })
			res := send(local(), map[string]any{"url": srv.URL, "responseBodySchema": schema, "enforceSchemaValidation": tc.enforce})
			require.Equal(t, tc.failure, res.Failure)
			require.Equal(t, 200, res.StatusCode)
			if tc.failure != "" {
				require.Equal(t, map[string]any{}, res.Output())
				require.Contains(t, res.Raw, `"errors":[{"path":`)
			}
		})
	}

	srv := record(t, nil)
	res := send(local(), map[string]any{"url": srv.URL, "enforceSchemaValidation": true,
		"responseBodySchema": map[string]any{"$ref": "https://schemas.example/remote.json"}})
	require.True(t, strings.HasPrefix(res.Failure, "Response schema validation failed: (root): responseBodySchema does not compile: "), res.Failure)
}
