package bridge

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/jsvalue"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/stretchr/testify/require"
)

// inApp is an in_app step's state as Herald passes it on.
func inApp(stepID string, read bool) StepState {
	return StepState{StepID: stepID, Status: "completed",
		Outputs: json.RawMessage(`{"seen":true,"read":` + strconv.FormatBool(read) + `,"lastSeenDate":"2026-01-01T00:00:00.000Z","lastReadDate":null}`)}
}

// TestFramework calls the real @novu/framework bridge (clients/bridge-app)
// with every action and checks what it answers.
func TestFramework(t *testing.T) {
	t.Parallel()
	const key = "sk_test_framework_0123456789"
	bridgeURL := nodetest.StartBridgeApp(t, key)
	c := New(Options{Dialer: &netguard.Dialer{AllowPrivate: true}, Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	subscriber := json.RawMessage(`{"subscriberId":"sub-1","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com"}`)
	env := Env{Name: "Development", Type: "dev"}
	execute := func(t *testing.T, workflowID, stepID, payload, controls string, state ...StepState) (*Result, error) {
		t.Helper()
		return c.Execute(ctx, bridgeURL, key, &ExecuteRequest{WorkflowID: workflowID, StepID: stepID,
			Payload: json.RawMessage(payload), Controls: json.RawMessage(controls), State: state,
			Subscriber: subscriber, Env: env})
	}

	t.Run("discover", func(t *testing.T) {
		t.Parallel()
		d, err := c.Discover(ctx, bridgeURL, key)
		require.NoError(t, err)
		type step struct{ ID, Type string }
		got := map[string][]step{}
		var order []string
		for _, w := range d.Workflows {
			order = append(order, w.WorkflowID)
			for _, s := range w.Steps {
				got[w.WorkflowID] = append(got[w.WorkflowID], step{s.StepID, s.Type})
				require.NotNil(t, s.OutputsSchema, s.StepID)
				require.NotNil(t, s.ResultsSchema, s.StepID)
			}
		}
		require.Equal(t, []string{"welcome", "digest", "echo", "fails"}, order)
		require.Equal(t, map[string][]step{
			"welcome": {{"inbox", "in_app"}, {"follow-up", "email"}, {"text", "sms"}},
			"digest":  {{"collect", "digest"}, {"wait", "delay"}, {"summary", "in_app"}},
			"echo":    {{"echo", "in_app"}},
			"fails":   {{"boom", "in_app"}},
		}, got)

		w := d.Workflows[0]
		require.Equal(t, "Welcome", w.Name)
		require.Equal(t, "Greets a new subscriber", w.Description)
		require.Equal(t, []string{"onboarding"}, w.Tags)
		require.Equal(t, `{"type":"object","properties":{"name":{"type":"string"},"plan":{"type":"string","default":"free"}},`+
			`"required":["name"],"additionalProperties":false}`, string(w.PayloadSchema))
		require.Equal(t, `{"type":"object","properties":{"subject":{"type":"string","default":"Welcome, {{payload.name}}!"},`+
			`"body":{"type":"string","default":"You are on the {{payload.plan}} plan."},`+
			`"url":{"type":"string","default":"https://example.com/start"}},"additionalProperties":false}`,
			string(w.Steps[0].ControlsSchema))
		require.Contains(t, string(w.Steps[0].ResultsSchema), `"required":["seen","read","lastSeenDate","lastReadDate"]`)
		require.Contains(t, string(d.Workflows[1].Steps[0].ControlsSchema), `"enum":["seconds","minutes","hours","days"]`)
	})

	t.Run("health-check", func(t *testing.T) {
		t.Parallel()
		h, err := c.HealthCheck(ctx, bridgeURL, key)
		require.NoError(t, err)
		var got struct {
			Status     string
			SDKVersion string `json:"sdkVersion"`
			Discovered struct{ Workflows, Steps int }
		}
		require.NoError(t, json.Unmarshal(h, &got))
		require.Equal(t, "ok", got.Status)
		require.Equal(t, "2.13.2", got.SDKVersion)
		require.Equal(t, 4, got.Discovered.Workflows)
		require.Equal(t, 8, got.Discovered.Steps)
	})

	t.Run("in_app with defaults and Liquid", func(t *testing.T) {
		t.Parallel()
		r, err := execute(t, "welcome", "inbox", `{"name":"Ada"}`, `{}`)
		require.NoError(t, err)
		require.False(t, r.Skip)
		require.Equal(t, `{"subject":"Welcome, Ada!","body":"You are on the free plan.",`+
			`"redirect":{"url":"https://example.com/start","target":"_blank"},"data":{"plan":"free"}}`, string(r.RawOutputs))
		require.Equal(t, "success", r.Metadata.Status)

		r, err = execute(t, "welcome", "inbox", `{"name":"Ada","plan":"pro"}`,
			`{"subject":"Hi {{subscriber.firstName}} ({{env.type}})","url":"/inbox"}`)
		require.NoError(t, err)
		require.Equal(t, "Hi Ada (dev)", r.Outputs["subject"])
		require.Equal(t, "You are on the pro plan.", r.Outputs["body"])
		require.Equal(t, map[string]any{"url": "/inbox", "target": "_blank"}, r.Outputs["redirect"])
	})

	t.Run("state and skip", func(t *testing.T) {
		t.Parallel()
		r, err := execute(t, "welcome", "follow-up", `{"name":"Ada"}`, `{}`, inApp("inbox", false))
		require.NoError(t, err)
		require.False(t, r.Skip)
		require.Equal(t, map[string]any{"subject": "Still there, Ada?", "body": "<p>Your welcome message is unread.</p>"}, r.Outputs)

		r, err = execute(t, "welcome", "follow-up", `{"name":"Ada"}`, `{}`, inApp("inbox", true))
		require.NoError(t, err)
		require.True(t, r.Skip)
		require.Equal(t, map[string]any{}, r.Outputs)

		skipped := StepState{StepID: "follow-up", Status: "skipped", Outputs: json.RawMessage(`{}`)}
		r, err = execute(t, "welcome", "text", `{"name":"Ada"}`, `{}`, skipped, inApp("inbox", true))
		require.NoError(t, err)
		require.False(t, r.Skip)
		require.Equal(t, map[string]any{"body": "Hi Ada"}, r.Outputs)

		r, err = execute(t, "welcome", "text", `{"name":"Ada"}`, `{"off":true}`, skipped, inApp("inbox", true))
		require.NoError(t, err)
		require.True(t, r.Skip, "skip by a control value")

		_, err = execute(t, "welcome", "follow-up", `{"name":"Ada"}`, `{}`)
		be := asError(t, err)
		require.Equal(t, 400, be.Status)
		require.Equal(t, "ExecutionStateCorruptError", be.Code)
		require.JSONEq(t, `{"workflowId":"welcome","stepId":"inbox"}`, string(be.Data))
	})

	t.Run("digest and delay", func(t *testing.T) {
		t.Parallel()
		r, err := execute(t, "digest", "collect", `{}`, `{}`)
		require.NoError(t, err)
		require.Equal(t, `{"amount":5,"unit":"minutes"}`, string(r.RawOutputs), "schema defaults")
		r, err = execute(t, "digest", "collect", `{}`, `{"amount":3,"unit":"hours"}`)
		require.NoError(t, err)
		require.Equal(t, `{"amount":3,"unit":"hours"}`, string(r.RawOutputs))

		digest := StepState{StepID: "collect", Status: "completed", Outputs: json.RawMessage(
			`{"events":[{"id":"e1","time":"2026-01-01T00:00:00.000Z","payload":{}},{"id":"e2","time":"2026-01-01T00:01:00.000Z","payload":{"x":1}}],"eventCount":2}`)}
		r, err = execute(t, "digest", "wait", `{}`, `{}`, digest)
		require.NoError(t, err)
		var delay struct {
			Amount float64
			Unit   string
		}
		require.NoError(t, r.Decode(&delay))
		require.Equal(t, 2.0, delay.Amount)
		require.Equal(t, "seconds", delay.Unit)

		wait := StepState{StepID: "wait", Status: "completed", Outputs: json.RawMessage(`{"duration":2000}`)}
		r, err = execute(t, "digest", "summary", `{}`, `{}`, wait, digest)
		require.NoError(t, err)
		require.Equal(t, "2 events", r.Outputs["body"])
	})

	t.Run("a step that throws", func(t *testing.T) {
		t.Parallel()
		_, err := execute(t, "fails", "boom", `{}`, `{}`)
		be := asError(t, err)
		require.Equal(t, 502, be.Status)
		require.Equal(t, "StepExecutionFailedError", be.Code)
		require.Equal(t, "Failed to execute Step with id: `boom`: the step blew up", be.Message)
		require.Equal(t, 1, be.Attempts, "502 is not retried")
		require.False(t, be.Retryable)
		require.Contains(t, be.Raw(), `"message":"Failed to execute Step with id: `+"`boom`"+`: the step blew up","code":"StepExecutionFailedError"`)
	})

	t.Run("an invalid payload", func(t *testing.T) {
		t.Parallel()
		_, err := execute(t, "welcome", "inbox", `{"plan":"pro"}`, `{}`)
		be := asError(t, err)
		require.Equal(t, 400, be.Status)
		require.Equal(t, "ExecutionEventPayloadInvalidError", be.Code)
		require.Equal(t, "Workflow with id: `welcome` has invalid `payload`. Please provide the correct event payload.", be.Message)
		require.Equal(t, `[{"path":"","message":"must have required property 'name'"}]`, string(be.Data))
		require.Equal(t, 1, be.Attempts)
	})

	t.Run("a wrong secret", func(t *testing.T) {
		t.Parallel()
		const sigErr = "Signature does not match the expected signature. Please ensure the signature provided in the `novu-signature` header is correct and try again."
		_, err := c.Discover(ctx, bridgeURL, "sk_some_other_environment")
		be := asError(t, err)
		require.Equal(t, 401, be.Status)
		require.Equal(t, "SignatureMismatchError", be.Code)
		require.Equal(t, sigErr, be.Message)
		require.NotContains(t, err.Error(), "sk_some_other_environment")

		_, err = c.Execute(ctx, bridgeURL, "sk_some_other_environment", &ExecuteRequest{WorkflowID: "welcome", StepID: "inbox",
			Payload: json.RawMessage(`{"name":"Ada"}`)})
		be = asError(t, err)
		require.Equal(t, "SignatureMismatchError", be.Code)
		require.Equal(t, 1, be.Attempts)
	})

	t.Run("payloads JavaScript re-stringifies", func(t *testing.T) {
		t.Parallel()
		for _, payload := range []string{
			`{"b":1,"10":"ten","2":"two","a":"x"}`,
			`{"html":"<b>&amp;</b> <script>","sep":"` + "\u2028\u2029" + `","esc":"\u2028\u0007\/\"","emoji":"😀","é":"ü"}`,
			`{"big":12345678901234567890,"small":5e-324,"exp":1E21,"neg":-0,"frac":0.10,"max":1.7976931348623157e308,"tiny":1e-7}`,
			`{"nested":{"9":[{"1":{"0":null}}],"z":[true,false,{}],"":""},"4294967295":"not an index","4294967294":"an index"}`,
		} {
			r, err := execute(t, "echo", "echo", payload, `{}`)
			require.NoError(t, err, payload)
			v, err := jsvalue.ParseJSON(payload)
			require.NoError(t, err)
			require.Equal(t, string(jsvalue.Stringify(v)), r.Outputs["body"], "the bridge's JSON.stringify(payload)")
		}
	})

	t.Run("preview", func(t *testing.T) {
		t.Parallel()
		r, err := c.Preview(ctx, bridgeURL, key, &ExecuteRequest{WorkflowID: "welcome", StepID: "inbox",
			Payload: json.RawMessage(`{"name":"Bo"}`), Controls: json.RawMessage(`{"subject":"Hey {{payload.name}}"}`),
			Subscriber: subscriber, Env: env})
		require.NoError(t, err)
		require.Equal(t, "Hey Bo", r.Outputs["subject"])
		require.Equal(t, "You are on the free plan.", r.Outputs["body"])

		r, err = c.Preview(ctx, bridgeURL, key, &ExecuteRequest{WorkflowID: "welcome", StepID: "follow-up",
			Payload: json.RawMessage(`{"name":"Bo"}`)})
		require.NoError(t, err, "preview mocks the state of earlier steps")
		require.Contains(t, r.Outputs["body"], "Your welcome message is")
	})
}
