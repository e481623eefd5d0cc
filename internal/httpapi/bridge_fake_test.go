package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeBridge is a Novu Framework bridge on loopback that answers discover
// with the real app's answer (internal/bridge/testdata, captured from
// @novu/framework 2.13.2) and checks every call's novu-signature against
// key over the exact bytes received, as the framework does; its discover
// answer can be replaced. It executes the steps of that answer's
// workflows as their code would (see execute) and records each execute
// request.
type fakeBridge struct {
	*httptest.Server
	key      string
	discover atomic.Pointer[string]
	calls    atomic.Int64
	// down, when set, is the status every execute answers.
	down atomic.Int64
	// hang, when set, makes every execute wait until the caller goes away.
	hang atomic.Bool
	// hostile, when set, makes every execute answer as a hostile bridge
	// does: "endless" streams a JSON string until the caller stops
	// reading, "huge" sends 8 MiB of valid JSON, "shape" JSON that is not
	// an execute answer, "html" a page instead of JSON.
	hostile atomic.Pointer[string]

	mu       sync.Mutex
	executed []fakeExecution
}

// fakeExecution is one execute request the bridge received.
type fakeExecution struct {
	WorkflowID, StepID string
	Body               map[string]any
}

func newFakeBridge(t *testing.T, key string) *fakeBridge {
	t.Helper()
	raw, err := os.ReadFile("../bridge/testdata/discover-framework-2.13.2.json")
	require.NoError(t, err)
	b := &fakeBridge{key: key}
	d := string(raw)
	b.discover.Store(&d)
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

// URL is the bridge's endpoint, as apps serve it.
func (b *fakeBridge) URL() string { return b.Server.URL + "/api/novu" }

// executions are the execute requests received so far.
func (b *fakeBridge) executions() []fakeExecution {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]fakeExecution(nil), b.executed...)
}

// execution is the one execute request of a step.
func (b *fakeBridge) execution(t *testing.T, stepID string) fakeExecution {
	t.Helper()
	var found []fakeExecution
	for _, x := range b.executions() {
		if x.StepID == stepID {
			found = append(found, x)
		}
	}
	require.Len(t, found, 1, "execute requests of %s", stepID)
	return found[0]
}

func (b *fakeBridge) serve(w http.ResponseWriter, r *http.Request) {
	b.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	body, _ := io.ReadAll(r.Body)
	signed := string(body)
	if r.Method == http.MethodGet {
		signed = "{}"
	}
	ts, v1, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("novu-signature"), "t="), ",v1=")
	mac := hmac.New(sha256.New, []byte(b.key))
	mac.Write([]byte(ts + "." + signed))
	if !hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil)))) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Signature does not match the expected signature. Please ensure the signature provided` +
			` in the \"novu-signature\" header is correct and try again.","code":"SignatureMismatchError","data":{}}`))
		return
	}
	q := r.URL.Query()
	switch q.Get("action") {
	case "discover":
		_, _ = w.Write([]byte(*b.discover.Load()))
		return
	case "health-check":
		_, _ = w.Write([]byte(`{"status":"ok","sdkVersion":"2.13.2","frameworkVersion":"2.13.2","discovered":{"workflows":4,"steps":8}}`))
		return
	case "execute", "preview": // a preview runs the step as an execute does, with no state
		if r.Method != http.MethodPost {
			break
		}
		if b.hang.Load() {
			<-r.Context().Done()
			return
		}
		if mode := b.hostile.Load(); mode != nil {
			b.answerHostile(w, r, *mode)
			return
		}
		if s := b.down.Load(); s != 0 {
			w.WriteHeader(int(s))
			_, _ = w.Write([]byte(`{"message":"the bridge is down"}`))
			return
		}
		var in map[string]any
		if json.Unmarshal(body, &in) != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"message":"not JSON","code":"BridgeError","data":{}}`))
			return
		}
		b.mu.Lock()
		b.executed = append(b.executed, fakeExecution{WorkflowID: q.Get("workflowId"), StepID: q.Get("stepId"), Body: in})
		b.mu.Unlock()
		status, out := b.execute(q.Get("workflowId"), q.Get("stepId"), in)
		w.WriteHeader(status)
		raw, _ := json.Marshal(out)
		_, _ = w.Write(raw)
		return
	}
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"message":"unknown action","code":"MethodNotAllowedError","data":{}}`))
}

// fakeSteps are the steps of each workflow of the discover answer, in
// order: execute refuses a request whose state lacks an earlier one, as
// the framework does.
var fakeSteps = map[string][]string{
	"welcome": {"inbox", "follow-up", "text"},
	"digest":  {"collect", "wait", "summary"},
	"echo":    {"echo"},
	"fails":   {"boom"},
}

// execute answers a step as the workflow's code would. payload.skip names
// a step whose skip function says yes; payload.fail one that throws.
func (b *fakeBridge) execute(workflowID, stepID string, in map[string]any) (int, map[string]any) {
	steps, ok := fakeSteps[workflowID]
	if !ok {
		return http.StatusNotFound, map[string]any{"message": fmt.Sprintf("Workflow with id: `%s` does not exist", workflowID),
			"code": "WorkflowNotFoundError", "data": map[string]any{}}
	}
	state := map[string]map[string]any{}
	list, _ := in["state"].([]any)
	for _, s := range list {
		m, _ := s.(map[string]any)
		id, _ := m["stepId"].(string)
		state[id] = m
	}
	for _, s := range steps {
		if s == stepID {
			break
		}
		if state[s] == nil {
			return http.StatusBadRequest, map[string]any{"message": fmt.Sprintf("Workflow with id: `%s` has a corrupt state. Step with id: `%s` does not exist. Please provide the missing state.", workflowID, s),
				"code": "ExecutionStateCorruptError", "data": map[string]any{}}
		}
	}
	payload, _ := in["payload"].(map[string]any)
	name, _ := payload["name"].(string)
	if payload["fail"] == stepID || workflowID == "fails" {
		return http.StatusBadGateway, map[string]any{"message": fmt.Sprintf("Failed to execute Step with id: `%s`: the step blew up", stepID),
			"code": "StepExecutionFailedError", "data": map[string]any{}}
	}
	skip := payload["skip"] == stepID
	var outputs map[string]any
	providers := map[string]any{}
	switch workflowID + "/" + stepID {
	case "welcome/inbox":
		outputs = map[string]any{"subject": "Welcome", "body": "Hi " + name, "avatar": "https://x.test/a.png",
			"data": map[string]any{"plan": "free"}, "redirect": map[string]any{"url": "https://x.test/home", "target": "_blank"},
			"primaryAction": map[string]any{"label": "Open", "redirect": map[string]any{"url": "https://x.test/open"}}}
	case "welcome/follow-up":
		read := state["inbox"]["outputs"].(map[string]any)["read"]
		outputs = map[string]any{"subject": "Hello " + name, "body": fmt.Sprintf("<p>Hi <b>%s</b> &amp; co; read: %v</p>", name, read)}
		providers["sendgrid"] = map[string]any{"ipPoolName": "bridge-pool", // the framework's casing
			"_passthrough": map[string]any{"body": map[string]any{"custom_args": map[string]any{"orderId": "o-1"}}}}
	case "welcome/text":
		outputs = map[string]any{"body": "Hi " + name}
	case "digest/collect":
		outputs = map[string]any{"amount": 1, "unit": "seconds"}
	case "digest/wait":
		outputs = map[string]any{"amount": 1, "unit": "seconds"}
	case "digest/summary":
		n := state["collect"]["outputs"].(map[string]any)["eventCount"]
		outputs = map[string]any{"body": fmt.Sprintf("%v events", n)}
	case "echo/echo":
		raw, _ := json.Marshal(payload)
		outputs = map[string]any{"body": string(raw)}
	}
	if skip {
		outputs = map[string]any{}
	}
	return http.StatusOK, map[string]any{"outputs": outputs, "providers": providers, "options": map[string]any{"skip": skip},
		"metadata": map[string]any{"status": "success", "error": false, "duration": 1}}
}

// answerHostile answers an execute as b.hostile says.
func (b *fakeBridge) answerHostile(w http.ResponseWriter, r *http.Request, mode string) {
	switch mode {
	case "endless":
		_, _ = w.Write([]byte(`{"outputs":{"body":"`))
		chunk := []byte(strings.Repeat("a", 64<<10))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "huge":
		_, _ = w.Write([]byte(`{"outputs":{"body":"` + strings.Repeat("a", 8<<20) + `"},"providers":{},"options":{}}`))
	case "shape":
		_, _ = w.Write([]byte(`{"outputs":"not an object","options":[1,2,3],"providers":7}`))
	case "html":
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>Welcome to nginx!</body></html>"))
	}
}
