package bridge

import (
	"context"
	"crypto/hmac"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/jsvalue"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/stretchr/testify/require"
)

const testKey = "sk_test_0123456789abcdef"

// call is one request a fake bridge got.
type call struct {
	Method string
	Query  map[string]string
	Header http.Header
	Body   []byte
}

// fake is a bridge on 127.0.0.1 that records what it gets and checks every
// signature the way @novu/framework's validateHmac does: over
// JSON.stringify(JSON.parse(body)), {} for a GET.
type fake struct {
	*httptest.Server
	t     *testing.T
	mu    sync.Mutex
	calls []call
}

func newFake(t *testing.T, h http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{t: t}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		q := map[string]string{}
		for k := range r.URL.Query() {
			q[k] = r.URL.Query().Get(k)
		}
		f.mu.Lock()
		f.calls = append(f.calls, call{Method: r.Method, Query: q, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		f.verify(r, body)
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// verify checks the request's signature as the framework does.
func (f *fake) verify(r *http.Request, body []byte) {
	signed := []byte("{}")
	if r.Method == http.MethodPost {
		v, err := jsvalue.ParseJSON(string(body))
		if err != nil {
			f.t.Errorf("body %q is not JSON: %v", body, err)
			return
		}
		signed = jsvalue.Stringify(v)
		if string(signed) != string(body) {
			f.t.Errorf("body %q is not a fixed point of parse and stringify: %q", body, signed)
		}
	}
	sig := r.Header.Get(SignatureHeader)
	ts, _, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",")
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		f.t.Errorf("signature %q has no millisecond timestamp", sig)
		return
	}
	if !hmac.Equal([]byte(sig), []byte(secret.NovuSignature(testKey, time.UnixMilli(ms), signed))) {
		f.t.Errorf("signature %q does not verify over %q", sig, signed)
	}
	if r.Header.Get("X-Novu-Signature") != sig {
		f.t.Errorf("x-novu-signature %q differs from novu-signature %q", r.Header.Get("X-Novu-Signature"), sig)
	}
}

func (f *fake) got() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func (f *fake) bridgeURL() string { return f.URL + "/api/novu" }

// client is a Client for loopback fakes: no waits between attempts.
func client(o Options) *Client {
	if o.Dialer == nil {
		o.Dialer = &netguard.Dialer{AllowPrivate: true}
	}
	if o.Backoff == nil {
		o.Backoff = func(int) time.Duration { return 0 }
	}
	return New(o)
}

func answerJSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestDiscoverFrameworkAnswer(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/discover-framework-2.13.2.json")
	require.NoError(t, err)
	f := newFake(t, answerJSON(200, string(data)))

	d, err := client(Options{}).Discover(context.Background(), f.bridgeURL(), testKey)
	require.NoError(t, err)

	calls := f.got()
	require.Len(t, calls, 1)
	require.Equal(t, "GET", calls[0].Method)
	require.Equal(t, map[string]string{"action": "discover"}, calls[0].Query)
	require.Empty(t, calls[0].Body)

	require.JSONEq(t, string(data), string(d.Raw))
	var ids []string
	for _, w := range d.Workflows {
		ids = append(ids, w.WorkflowID)
	}
	require.Equal(t, []string{"welcome", "digest", "echo", "fails"}, ids)

	w := d.Workflows[0]
	require.Equal(t, "Welcome", w.Name)
	require.Equal(t, "Greets a new subscriber", w.Description)
	require.Equal(t, []string{"onboarding"}, w.Tags)
	require.Equal(t, "none", w.Severity)
	require.JSONEq(t, `{"type":"object","properties":{"name":{"type":"string"},"plan":{"type":"string","default":"free"}},
		"required":["name"],"additionalProperties":false}`, string(w.PayloadSchema))
	require.True(t, strings.HasPrefix(string(w.PayloadSchema), `{"type":"object","properties":{"name"`), "key order kept")
	var steps []string
	for _, s := range w.Steps {
		steps = append(steps, s.StepID+":"+s.Type)
	}
	require.Equal(t, []string{"inbox:in_app", "follow-up:email", "text:sms"}, steps)
	require.JSONEq(t, `{"type":"object","properties":{"subject":{"type":"string","default":"Welcome, {{payload.name}}!"},
		"body":{"type":"string","default":"You are on the {{payload.plan}} plan."},
		"url":{"type":"string","default":"https://example.com/start"}},"additionalProperties":false}`,
		string(w.Steps[0].ControlsSchema))
	require.Contains(t, string(w.Steps[0].OutputsSchema), `"primaryAction"`)
	require.Contains(t, string(w.Steps[0].ResultsSchema), `"lastReadDate"`)
	require.Contains(t, w.Steps[0].Code, "controls.subject")

	dg := d.Workflows[1]
	require.Equal(t, "", dg.Name)
	require.Equal(t, []string{"collect", "wait", "summary"}, []string{dg.Steps[0].StepID, dg.Steps[1].StepID, dg.Steps[2].StepID})
	require.Equal(t, []string{"digest", "delay", "in_app"}, []string{dg.Steps[0].Type, dg.Steps[1].Type, dg.Steps[2].Type})
}

func TestDiscoverRefusesWrongShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, code, msg string
	}{
		{"not JSON", `<html>hi</html>`, CodeParse, "is not valid JSON"},
		{"empty", ``, CodeParse, "is not valid JSON"},
		{"an array", `[]`, CodeInvalidResponse, "the answer is not a JSON object"},
		{"no workflows", `{"agents":[]}`, CodeInvalidResponse, "the answer has no workflows"},
		{"workflows not a list", `{"workflows":{}}`, CodeInvalidResponse, "workflows is not of the expected type (object)"},
		{"workflow not an object", `{"workflows":[1]}`, CodeInvalidResponse, "workflows[0] is not a JSON object"},
		{"workflowId a number", `{"workflows":[{"workflowId":7,"steps":[]}]}`, CodeInvalidResponse, "workflows[0].workflowId is not of the expected type (number)"},
		{"empty workflowId", `{"workflows":[{"workflowId":"","steps":[]}]}`, CodeInvalidResponse, "workflows[0].workflowId is empty"},
		{"twice", `{"workflows":[{"workflowId":"a"},{"workflowId":"a"}]}`, CodeInvalidResponse, `workflowId "a" is listed twice`},
		{"tags not strings", `{"workflows":[{"workflowId":"a","tags":[1]}]}`, CodeInvalidResponse, `tags is not of the expected type`},
		{"step without type", `{"workflows":[{"workflowId":"a","steps":[{"stepId":"s"}]}]}`, CodeInvalidResponse, `workflows[0] ("a").steps[0] has no type`},
		{"step twice", `{"workflows":[{"workflowId":"a","steps":[{"stepId":"s","type":"email"},{"stepId":"s","type":"sms"}]}]}`,
			CodeInvalidResponse, `stepId "s" is listed twice`},
		{"schema not an object", `{"workflows":[{"workflowId":"a","payload":{"schema":"x"}}]}`, CodeInvalidResponse, `payload.schema is not a JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answerJSON(200, tc.body))
			_, err := client(Options{}).Discover(context.Background(), f.bridgeURL(), testKey)
			var be *Error
			require.ErrorAs(t, err, &be)
			require.Equal(t, tc.code, be.Code)
			require.Contains(t, be.Message, tc.msg)
			require.Equal(t, 200, be.Status)
			require.Len(t, f.got(), 1)
		})
	}
}

func TestDiscoverEmptyAndNullFields(t *testing.T) {
	t.Parallel()
	f := newFake(t, answerJSON(200, `{"workflows":[{"workflowId":"a","name":null,"tags":null,"steps":null,
		"options":{"payloadSchema":{"type":"object"}},"inputs":{"schema":{"type":"object","properties":{}}}}]}`))
	d, err := client(Options{}).Discover(context.Background(), f.bridgeURL(), testKey)
	require.NoError(t, err)
	require.Len(t, d.Workflows, 1)
	w := d.Workflows[0]
	require.Equal(t, "", w.Name)
	require.Nil(t, w.Tags)
	require.Empty(t, w.Steps)
	require.JSONEq(t, `{"type":"object"}`, string(w.PayloadSchema), "options.payloadSchema when payload.schema is absent")
	require.JSONEq(t, `{"type":"object","properties":{}}`, string(w.ControlsSchema), "inputs.schema when controls.schema is absent")
}

func TestHealthCheck(t *testing.T) {
	t.Parallel()
	const health = `{"status":"ok","sdkVersion":"2.13.2","frameworkVersion":"2024-06-26","discovered":{"workflows":4,"steps":8}}`
	f := newFake(t, answerJSON(200, health+"\n"))
	got, err := client(Options{}).HealthCheck(context.Background(), f.bridgeURL()+"?keep=1&action=x", testKey)
	require.NoError(t, err)
	require.Equal(t, health, string(got))
	calls := f.got()
	require.Equal(t, "GET", calls[0].Method)
	require.Equal(t, map[string]string{"action": "health-check", "keep": "1"}, calls[0].Query)
}

// errors.As with a target of the package's type.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var be *Error
	require.True(t, errors.As(err, &be), "%v (%T) is not a *bridge.Error", err, err)
	return be
}
