package bridge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/herald-notify/herald/internal/jsvalue"
	"github.com/stretchr/testify/require"
)

func TestExecuteSendsWhatJavaScriptWouldSign(t *testing.T) {
	t.Parallel()
	f := newFake(t, answerJSON(200, `{"outputs":{"body":"hi"},"providers":{},"options":{"skip":false},
		"metadata":{"status":"success","error":false,"duration":1.5}}`))
	req := &ExecuteRequest{
		WorkflowID: "welcome",
		StepID:     "in-app",
		Payload: json.RawMessage(`{"b":1,"10":"ten","2":"two","a":"<>&` + "\u2028 \u2029" + `","big":12345678901234567890,
			"small":5e-324,"exp":1E21,"frac":0.10,"neg":-0,"esc":"\u003c\/\u00e9","nested":{"z":[1,{"1":true,"0":null}],"y":{}}}`),
		Controls: json.RawMessage(`{"subject":"Hi {{payload.name}}"}`),
		State: []StepState{
			{StepID: "digest", Outputs: json.RawMessage(`{"events":[],"eventCount":0}`), Status: "completed"},
			{StepID: "trigger", Status: "failed", Error: "boom"},
		},
		Subscriber: json.RawMessage(`{"subscriberId":"s-1","firstName":"Ada","email":"ada@example.com"}`),
		Env:        Env{Name: "Development", Type: "dev"},
	}
	res, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey, req)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"body": "hi"}, res.Outputs)
	require.Equal(t, 1.5, res.Metadata.Duration)

	calls := f.got()
	require.Len(t, calls, 1)
	c := calls[0]
	require.Equal(t, "POST", c.Method)
	require.Equal(t, map[string]string{"action": "execute", "workflowId": "welcome", "stepId": "in-app"}, c.Query)
	require.Equal(t, "application/json", c.Header.Get("Content-Type"))
	require.Equal(t, `{"payload":{"2":"two","10":"ten","b":1,"a":"<>&`+"\u2028 \u2029"+`","big":12345678901234567000,`+
		`"small":5e-324,"exp":1e+21,"frac":0.1,"neg":0,"esc":"</é","nested":{"z":[1,{"0":null,"1":true}],"y":{}}},`+
		`"controls":{"subject":"Hi {{payload.name}}"},`+
		`"state":[{"stepId":"digest","outputs":{"events":[],"eventCount":0},"state":{"status":"completed","error":null}},`+
		`{"stepId":"trigger","outputs":{},"state":{"status":"failed","error":"boom"}}],`+
		`"subscriber":{"subscriberId":"s-1","firstName":"Ada","email":"ada@example.com"},"context":{},`+
		`"env":{"name":"Development","type":"dev"}}`, string(c.Body))
}

func TestExecuteEmptyRequest(t *testing.T) {
	t.Parallel()
	f := newFake(t, answerJSON(200, `{"outputs":{},"providers":{},"options":{"skip":true}}`))
	res, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey,
		&ExecuteRequest{WorkflowID: "w", StepID: "s", Payload: json.RawMessage("null")})
	require.NoError(t, err)
	require.True(t, res.Skip)
	require.Equal(t, map[string]any{}, res.Outputs)
	require.Equal(t, `{"payload":{},"controls":{},"state":[],"subscriber":{},"context":{},"env":{"name":"","type":""}}`,
		string(f.got()[0].Body))
}

func TestExecuteRefusesInputThatIsNotAnObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		req  ExecuteRequest
		msg  string
	}{
		{"payload not JSON", ExecuteRequest{Payload: json.RawMessage(`{"a":`)}, "payload is not JSON"},
		{"payload an array", ExecuteRequest{Payload: json.RawMessage(`[1]`)}, "payload is not a JSON object"},
		{"controls a string", ExecuteRequest{Controls: json.RawMessage(`"x"`)}, "controls is not a JSON object"},
		{"state outputs", ExecuteRequest{State: []StepState{{StepID: "a", Outputs: json.RawMessage(`1`)}}}, "state[0].outputs is not a JSON object"},
		{"subscriber", ExecuteRequest{Subscriber: json.RawMessage(`{} x`)}, "subscriber is not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answerJSON(200, `{}`))
			_, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey, &tc.req)
			be := asError(t, err)
			require.Equal(t, CodeBadRequest, be.Code)
			require.Contains(t, be.Message, tc.msg)
			require.Empty(t, f.got(), "nothing is sent")
		})
	}
	_, err := client(Options{}).Execute(context.Background(), "http://127.0.0.1:1/x", testKey, nil)
	require.Equal(t, CodeBadRequest, asError(t, err).Code)
}

func TestResultShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		check      func(t *testing.T, r *Result)
		msg        string
	}{
		{name: "all of it", body: `{"outputs":{"subject":"S","body":"B","data":{"z":1,"a":2}},
			"providers":{"sendgrid":{"ipPoolName":"pool","_passthrough":{"body":{"x":1}}},"slack":null},
			"options":{"skip":false},"metadata":{"status":"success","error":false,"duration":12.5}}`,
			check: func(t *testing.T, r *Result) {
				require.Equal(t, "S", r.Outputs["subject"])
				require.Equal(t, `{"subject":"S","body":"B","data":{"z":1,"a":2}}`, string(r.RawOutputs))
				require.Equal(t, []string{"sendgrid"}, r.ProviderIDs())
				require.JSONEq(t, `{"ipPoolName":"pool","_passthrough":{"body":{"x":1}}}`, string(r.Providers["sendgrid"]))
				require.False(t, r.Skip)
				require.Equal(t, Metadata{Status: "success", Duration: 12.5}, r.Metadata)
				var out struct{ Subject, Body string }
				require.NoError(t, r.Decode(&out))
				require.Equal(t, "B", out.Body)
			}},
		{name: "only skip", body: `{"options":{"skip":true}}`, check: func(t *testing.T, r *Result) {
			require.True(t, r.Skip)
			require.Equal(t, map[string]any{}, r.Outputs)
			require.Equal(t, "{}", string(r.RawOutputs))
		}},
		{name: "skip must be true itself", body: `{"options":{"skip":"yes"}}`, check: func(t *testing.T, r *Result) {
			require.False(t, r.Skip)
		}},
		{name: "odd metadata is ignored", body: `{"outputs":{},"metadata":"fine"}`, check: func(t *testing.T, r *Result) {
			require.Equal(t, Metadata{}, r.Metadata)
		}},
		{name: "outputs a list", body: `{"outputs":[1]}`, msg: "outputs is not a JSON object"},
		{name: "outputs a string", body: `{"outputs":"x"}`, msg: "outputs is not a JSON object"},
		{name: "providers a list", body: `{"providers":[]}`, msg: "providers is not a JSON object"},
		{name: "a provider a number", body: `{"providers":{"ses":3}}`, msg: "providers.ses is not a JSON object"},
		{name: "options a list", body: `{"options":[]}`, msg: "options is not a JSON object"},
		{name: "a string", body: `"ok"`, msg: "the answer is not a JSON object"},
		{name: "null", body: `null`, msg: "the answer is not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answerJSON(200, tc.body))
			r, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey, &ExecuteRequest{WorkflowID: "w", StepID: "s"})
			if tc.msg != "" {
				be := asError(t, err)
				require.Equal(t, CodeInvalidResponse, be.Code)
				require.Contains(t, be.Message, tc.msg)
				require.Len(t, f.got(), 1, "a wrong shape is not retried")
				return
			}
			require.NoError(t, err)
			tc.check(t, r)
		})
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	f := newFake(t, answerJSON(200, `{"outputs":{"body":"Hey [placeholder]"},"providers":{},"options":{"skip":false}}`))
	r, err := client(Options{}).Preview(context.Background(), f.bridgeURL(), testKey,
		&ExecuteRequest{WorkflowID: "w", StepID: "s", Controls: json.RawMessage(`{"body":"Hey {{payload.name}}"}`)})
	require.NoError(t, err)
	require.Equal(t, "Hey [placeholder]", r.Outputs["body"])
	c := f.got()[0]
	require.Equal(t, "POST", c.Method)
	require.Equal(t, "preview", c.Query["action"])
}

// FuzzRequestBody checks that any payload the engine passes on goes out as
// bytes that JSON.stringify(JSON.parse(…)) gives back unchanged, with the
// payload's members as JavaScript would enumerate them.
func FuzzRequestBody(f *testing.F) {
	for _, s := range []string{`{"b":1,"2":2,"1":3}`, `{"a":"<>&\u2028"}`, `{"n":1e400,"m":-0,"s":"\ud800"}`, `null`, `{}`} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, payload, status string) {
		r := &ExecuteRequest{Payload: json.RawMessage(payload), State: []StepState{{StepID: status, Status: status, Error: status}}}
		body, err := r.body()
		if err != nil {
			return
		}
		v, err := jsvalue.ParseJSON(string(body))
		if err != nil {
			t.Fatalf("body %q does not parse: %v", body, err)
		}
		if again := jsvalue.Stringify(v); string(again) != string(body) {
			t.Fatalf("body %q is written %q again", body, again)
		}
		p, _ := jsvalue.ParseJSON(payload)
		if p == nil {
			p = jsvalue.NewObject()
		}
		got, _ := v.(*jsvalue.Object).Get("payload")
		if string(jsvalue.Stringify(got)) != string(jsvalue.Stringify(p)) {
			t.Fatalf("payload %q went as %q", payload, jsvalue.Stringify(got))
		}
	})
}
