package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/stretchr/testify/require"
)

func TestSignature(t *testing.T) {
	t.Parallel()
	// Node.js: createHmac('sha256', key).update('1767225600123.{"a":"<\u2028>"}').digest('hex')
	require.Equal(t, "t=1767225600123,v1=11fcd4cc62d36f2e3865912e665deb7383f55ec2d142c6c30a774dec0fb104d9",
		secret.NovuSignature(testKey, time.UnixMilli(1767225600123), []byte("{\"a\":\"<\u2028>\"}")))
}

func TestSignedAtNow(t *testing.T) {
	t.Parallel()
	f := newFake(t, answerJSON(200, `{"status":"ok"}`))
	now := time.UnixMilli(time.Now().UnixMilli())
	_, err := client(Options{Now: func() time.Time { return now }}).HealthCheck(context.Background(), f.bridgeURL(), testKey)
	require.NoError(t, err)
	require.Equal(t, secret.NovuSignature(testKey, now, []byte("{}")), f.got()[0].Header.Get("Novu-Signature"))
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	o := New(Options{}).opt
	require.Equal(t, 5*time.Second, o.Timeout)
	require.Equal(t, 3, o.Attempts)
	require.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second}, []time.Duration{o.Backoff(1), o.Backoff(2)})
	// A bridge that never answers fails the step within 30 s: three
	// attempts and the waits between them fit in the deadline.
	require.Equal(t, 30*time.Second, o.Deadline)
	require.LessOrEqual(t, 3*o.Timeout+o.Backoff(1)+o.Backoff(2), o.Deadline)
	require.False(t, o.Dialer.AllowPrivate)
}

// statuses answers each call with the next status (the last one again
// once they run out): a framework error body, or {} for 200.
func statuses(codes ...int) http.HandlerFunc {
	var n atomic.Int32
	return func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		code := codes[min(i, len(codes)-1)]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == 200 {
			_, _ = io.WriteString(w, `{"outputs":{"n":`+string(rune('0'+i))+`}}`)
			return
		}
		_, _ = io.WriteString(w, `{"message":"status `+http.StatusText(code)+`","code":"BridgeError"}`)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	type do func(c *Client, url string) error
	execute := func(c *Client, url string) error {
		_, err := c.Execute(context.Background(), url, testKey, &ExecuteRequest{WorkflowID: "w", StepID: "s"})
		return err
	}
	preview := func(c *Client, url string) error {
		_, err := c.Preview(context.Background(), url, testKey, &ExecuteRequest{WorkflowID: "w", StepID: "s"})
		return err
	}
	discover := func(c *Client, url string) error {
		_, err := c.Discover(context.Background(), url, testKey)
		return err
	}
	health := func(c *Client, url string) error {
		_, err := c.HealthCheck(context.Background(), url, testKey)
		return err
	}
	for _, tc := range []struct {
		name      string
		do        do
		opt       Options
		codes     []int
		calls     int
		status    int // of the error; 0: success
		retryable bool
	}{
		{name: "500 and 503, then an answer", do: execute, codes: []int{500, 503, 200}, calls: 3},
		{name: "408, 429, 504: three attempts", do: execute, codes: []int{408, 429, 504}, calls: 3, status: 504, retryable: true},
		{name: "521, 522, 524 as Novu", do: execute, codes: []int{521, 522, 524}, calls: 3, status: 524, retryable: true},
		{name: "400 is not retried", do: execute, codes: []int{400, 200}, calls: 1, status: 400},
		{name: "401 is not retried", do: execute, codes: []int{401, 200}, calls: 1, status: 401},
		{name: "404 is not retried", do: execute, codes: []int{404, 200}, calls: 1, status: 404},
		{name: "502 is not retried", do: execute, codes: []int{502, 200}, calls: 1, status: 502},
		{name: "Attempts bounds execute", do: execute, opt: Options{Attempts: 2}, codes: []int{500}, calls: 2, status: 500, retryable: true},
		{name: "preview makes one attempt", do: preview, codes: []int{500, 200}, calls: 1, status: 500, retryable: true},
		{name: "discover makes one attempt", do: discover, codes: []int{503, 200}, calls: 1, status: 503, retryable: true},
		{name: "health-check makes one attempt", do: health, codes: []int{500, 200}, calls: 1, status: 500, retryable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, statuses(tc.codes...))
			var waits []int
			var mu sync.Mutex
			tc.opt.Backoff = func(n int) time.Duration {
				mu.Lock()
				defer mu.Unlock()
				waits = append(waits, n)
				return time.Millisecond
			}
			err := tc.do(client(tc.opt), f.bridgeURL())
			require.Len(t, f.got(), tc.calls)
			mu.Lock()
			require.Len(t, waits, tc.calls-1, "one wait between attempts")
			for i, n := range waits {
				require.Equal(t, i+1, n)
			}
			mu.Unlock()
			if tc.status == 0 {
				require.NoError(t, err)
				return
			}
			be := asError(t, err)
			require.Equal(t, tc.status, be.Status)
			require.Equal(t, tc.calls, be.Attempts)
			require.Equal(t, tc.retryable, be.Retryable)
			require.Equal(t, "BridgeError", be.Code)
		})
	}
}

// hang is a handler that answers nothing until the client gives up or the
// test ends.
func hang(t *testing.T) http.HandlerFunc {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	h := hang(t)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			h(w, r)
			return
		}
		answerJSON(200, `{"outputs":{"ok":true}}`)(w, r)
	})
	start := time.Now()
	res, err := client(Options{Timeout: 100 * time.Millisecond}).Execute(context.Background(), f.bridgeURL(), testKey,
		&ExecuteRequest{WorkflowID: "w", StepID: "s"})
	require.NoError(t, err)
	require.Equal(t, true, res.Outputs["ok"])
	require.Len(t, f.got(), 2)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
}

func TestBridgeThatNeverAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		attempts int
	}{
		{"every attempt times out", 2 * time.Second, 3},
		{"the deadline cuts the second attempt", 250 * time.Millisecond, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, hang(t))
			start := time.Now()
			_, err := client(Options{Timeout: 150 * time.Millisecond, Deadline: tc.deadline}).Execute(context.Background(),
				f.bridgeURL(), testKey, &ExecuteRequest{WorkflowID: "w", StepID: "s"})
			elapsed := time.Since(start)
			be := asError(t, err)
			require.Equal(t, CodeTimeout, be.Code)
			require.True(t, be.Retryable)
			require.Equal(t, tc.attempts, be.Attempts)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Contains(t, be.Message, "Bridge request timeout for `http://127.0.0.1:")
			require.Less(t, elapsed, tc.deadline+time.Second, "bounded by the deadline")
		})
	}
}

func TestSlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"workflows":[`)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-done:
				return
			case <-tick.C:
				_, _ = io.WriteString(w, " ")
			}
		}
	})
	start := time.Now()
	_, err := client(Options{Timeout: 200 * time.Millisecond}).Discover(context.Background(), f.bridgeURL(), testKey)
	require.Equal(t, CodeTimeout, asError(t, err).Code)
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestCanceledByTheCaller(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	_, err := client(Options{}).Execute(ctx, f.bridgeURL(), testKey, &ExecuteRequest{WorkflowID: "w", StepID: "s"})
	be := asError(t, err)
	require.Equal(t, CodeCanceled, be.Code)
	require.False(t, be.Retryable)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, f.got(), 1)
}

func TestNetworkErrorIsRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			require.NoError(t, err)
			_ = conn.Close() // no answer at all
			return
		}
		answerJSON(200, `{"outputs":{}}`)(w, r)
	})
	_, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey, &ExecuteRequest{WorkflowID: "w", StepID: "s"})
	require.NoError(t, err)
	require.Len(t, f.got(), 2)

	// Nothing listens: connection refused, every attempt.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = client(Options{}).Execute(context.Background(), "http://"+addr+"/api/novu", testKey, &ExecuteRequest{})
	be := asError(t, err)
	require.Equal(t, CodeUnavailable, be.Code)
	require.True(t, be.Retryable)
	require.Equal(t, 3, be.Attempts)
	require.Contains(t, be.Message, "Unable to reach the bridge at `http://"+addr+"/api/novu?action=execute`")
}

func TestResponseSizeBound(t *testing.T) {
	t.Parallel()
	t.Run("just over", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, answerJSON(200, `{"outputs":{"body":"`+strings.Repeat("x", 1<<20)+`"}}`))
		_, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey, &ExecuteRequest{})
		be := asError(t, err)
		require.Equal(t, CodeTooLarge, be.Code)
		require.False(t, be.Retryable)
		require.Len(t, f.got(), 1)
	})
	t.Run("endless", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			chunk := []byte(strings.Repeat("[", 32<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		})
		_, err := client(Options{MaxResponse: 64 << 10}).HealthCheck(context.Background(), f.bridgeURL(), testKey)
		require.Equal(t, CodeTooLarge, asError(t, err).Code)
	})
	t.Run("error answers too", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, answerJSON(500, strings.Repeat(" ", 2048)))
		_, err := client(Options{MaxResponse: 1024}).Execute(context.Background(), f.bridgeURL(), testKey, &ExecuteRequest{})
		be := asError(t, err)
		require.Equal(t, CodeTooLarge, be.Code)
		require.Equal(t, 500, be.Status)
		require.Len(t, f.got(), 1, "an oversized answer is not retried")
	})
	t.Run("discover has its own bound", func(t *testing.T) {
		t.Parallel()
		big := `{"workflows":[],"pad":"` + strings.Repeat("x", 2<<20) + `"}`
		f := newFake(t, answerJSON(200, big))
		d, err := client(Options{}).Discover(context.Background(), f.bridgeURL(), testKey)
		require.NoError(t, err)
		require.Empty(t, d.Workflows)
		_, err = client(Options{MaxDiscovery: 1 << 20}).Discover(context.Background(), f.bridgeURL(), testKey)
		require.Equal(t, CodeTooLarge, asError(t, err).Code)
	})
}

func TestNotJSON(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>\xffnot the bridge</html>")
	})
	_, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey, &ExecuteRequest{})
	be := asError(t, err)
	require.Equal(t, CodeParse, be.Code)
	require.Equal(t, 200, be.Status)
	require.Equal(t, "<html>\uFFFDnot the bridge</html>", be.Body)
	require.Len(t, f.got(), 1, "not retried")
}

func TestErrorAnswers(t *testing.T) {
	t.Parallel()
	const payloadErr = `{"message":"Workflow with id: ` + "`welcome`" + ` has invalid ` + "`payload`" +
		`. Please provide the correct event payload.","data":[{"path":"","message":"must have required property 'name'"}],` +
		`"code":"ExecutionEventPayloadInvalidError"}`
	for _, tc := range []struct {
		name, body   string
		status       int
		code, msg    string
		data, raw    string
		errorContent string
	}{
		{name: "framework error", status: 400, body: payloadErr, code: "ExecutionEventPayloadInvalidError",
			msg:  "Workflow with id: `welcome` has invalid `payload`. Please provide the correct event payload.",
			data: `[{"path":"","message":"must have required property 'name'"}]`,
			raw: `{"message":"Workflow with id: ` + "`welcome`" + ` has invalid ` + "`payload`" + `. Please provide the correct event payload.",` +
				`"code":"ExecutionEventPayloadInvalidError","data":[{"path":"","message":"must have required property 'name'"}]}`,
			errorContent: "bridge execute: Workflow with id: `welcome` has invalid `payload`. Please provide the correct event payload. (ExecutionEventPayloadInvalidError, HTTP 400)"},
		{name: "signature", status: 401, code: "SignatureMismatchError",
			body: `{"message":"Signature does not match the expected signature. Please ensure the signature provided in the ` + "`novu-signature`" + ` header is correct and try again.","code":"SignatureMismatchError"}`,
			msg:  "Signature does not match the expected signature. Please ensure the signature provided in the `novu-signature` header is correct and try again.",
			raw:  `{"message":"Signature does not match the expected signature. Please ensure the signature provided in the ` + "`novu-signature`" + ` header is correct and try again.","code":"SignatureMismatchError"}`},
		{name: "plain 500", status: 500, body: "<html>oops</html>", code: CodeUnexpected, msg: "answered 500 Internal Server Error"},
		{name: "502 of a proxy", status: 502, body: "Bad Gateway", code: CodeNotFound, msg: "answered 502 Bad Gateway"},
		{name: "404", status: 404, body: "", code: CodeUnavailable, msg: "answered 404 Not Found"},
		{name: "405", status: 405, body: "{}", code: CodeMethodNotConfigured, msg: "answered 405 Method Not Allowed"},
		{name: "a message without a code", status: 418, body: `{"message":"short and stout","data":null}`, code: CodeUnexpected,
			msg: "short and stout", raw: `{"message":"short and stout","code":"BRIDGE_UNEXPECTED_RESPONSE"}`},
		{name: "a 3xx without Location", status: 300, body: `{}`, code: CodeUnexpected, msg: "answered 300 Multiple Choices"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answerJSON(tc.status, tc.body))
			_, err := client(Options{Attempts: 1}).Execute(context.Background(), f.bridgeURL(), testKey, &ExecuteRequest{})
			be := asError(t, err)
			require.Equal(t, tc.status, be.Status)
			require.Equal(t, tc.code, be.Code)
			require.Contains(t, be.Message, tc.msg)
			require.Equal(t, tc.body, be.Body)
			require.Equal(t, ActionExecute, be.Action)
			require.Equal(t, f.bridgeURL()+"?action=execute", be.URL)
			if tc.data != "" {
				require.Equal(t, tc.data, string(be.Data))
			} else {
				require.Nil(t, be.Data)
			}
			if tc.raw != "" {
				require.Equal(t, tc.raw, be.Raw())
			}
			if tc.errorContent != "" {
				require.Equal(t, tc.errorContent, be.Error())
			}
		})
	}
}

func TestSecretKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t, answerJSON(401, `{"message":"bad key `+testKey+`","code":"SignatureMismatchError","data":{"key":"`+testKey+`"}}`))
	_, err := client(Options{}).Execute(context.Background(), f.bridgeURL()+"?token="+testKey, testKey, &ExecuteRequest{})
	be := asError(t, err)
	for _, s := range []string{err.Error(), be.Message, be.Body, string(be.Data), be.URL, be.Raw()} {
		require.NotContains(t, s, testKey)
	}
	require.Equal(t, `{"key":"[redacted]"}`, string(be.Data))
	require.Equal(t, "bad key [redacted]", be.Message)

	// Nor in a failure without an answer, nor in the request's own.
	_, err = client(Options{}).Execute(context.Background(), "http://user:"+testKey+"@127.0.0.1:1/x?k="+testKey, testKey, &ExecuteRequest{})
	require.NotContains(t, err.Error(), testKey)
	require.NotContains(t, asError(t, err).URL, testKey)
	_, err = client(Options{}).Execute(context.Background(), "ftp://"+testKey, testKey, &ExecuteRequest{})
	require.NotContains(t, err.Error(), testKey)
}

func TestInvalidBridgeURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "not a url", "ftp://bridge.example/api", "http://", "http:///path", "://x", "http://a b/"} {
		_, err := client(Options{Dialer: &netguard.Dialer{Resolve: noResolve(t), Dial: noDial(t)}}).Discover(context.Background(), u, testKey)
		be := asError(t, err)
		require.Equal(t, CodeInvalidURL, be.Code, u)
		require.Zero(t, be.Attempts)
	}
}

// noDial is a dial hook that fails the test: nothing may be connected.
func noDial(t *testing.T) func(context.Context, string, string) (net.Conn, error) {
	return func(_ context.Context, _, addr string) (net.Conn, error) {
		t.Errorf("dialed %s", addr)
		return nil, errors.New("test: no connection may be made")
	}
}

// noResolve is a resolve hook that fails the test: no name may be looked up.
func noResolve(t *testing.T) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		t.Errorf("resolved %s", host)
		return nil, errors.New("test: no lookup may be made")
	}
}

// publicAddr is what bridge.example resolves to in these tests: a public
// (documentation) address the guard allows. The dial hook connects it to
// the loopback fake, so no packet leaves the machine.
const publicAddr = "192.0.2.10"

// guarded is a client that refuses private networks, resolves names from
// names, and connects publicAddr to f; any other dial fails the test.
func guarded(t *testing.T, f *fake, names map[string]string) *Client {
	_, port, err := net.SplitHostPort(f.Listener.Addr().String())
	require.NoError(t, err)
	return client(Options{Dialer: &netguard.Dialer{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			a, ok := names[host]
			if !ok {
				t.Errorf("resolved %s", host)
				return nil, errors.New("test: unknown name")
			}
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != net.JoinHostPort(publicAddr, port) {
				t.Errorf("dialed %s", addr)
				return nil, errors.New("test: no connection may be made there")
			}
			var d net.Dialer
			return d.DialContext(ctx, network, f.Listener.Addr().String())
		},
	}})
}

func TestPrivateAddressesRefused(t *testing.T) {
	t.Parallel()
	t.Run("a redirect to a private address", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://internal.example:8080/api/novu?action=execute", http.StatusTemporaryRedirect)
		})
		c := guarded(t, f, map[string]string{"bridge.example": publicAddr, "internal.example": "10.0.0.1"})
		_, port, _ := net.SplitHostPort(f.Listener.Addr().String())
		_, err := c.Execute(context.Background(), "http://bridge.example:"+port+"/api/novu", testKey, &ExecuteRequest{})
		be := asError(t, err)
		require.Equal(t, CodeRefused, be.Code)
		require.ErrorIs(t, err, netguard.ErrRefused)
		require.False(t, be.Retryable)
		require.Equal(t, 1, be.Attempts, "a refusal is not retried")
		require.Contains(t, be.Message, "internal.example resolves to 10.0.0.1")
		require.Len(t, f.got(), 1)
	})
	t.Run("a bridge on loopback", func(t *testing.T) {
		t.Parallel()
		_, err := client(Options{Dialer: &netguard.Dialer{Resolve: noResolve(t), Dial: noDial(t)}}).Discover(
			context.Background(), "http://127.0.0.1:9/api/novu", testKey)
		require.Equal(t, CodeRefused, asError(t, err).Code)
		_, err = client(Options{Dialer: &netguard.Dialer{Resolve: noResolve(t), Dial: noDial(t)}}).Discover(
			context.Background(), "http://[::1]:9/api/novu", testKey)
		require.ErrorIs(t, err, netguard.ErrRefused)
	})
	t.Run("the default guard", func(t *testing.T) {
		t.Parallel()
		_, err := New(Options{}).HealthCheck(context.Background(), "http://127.0.0.1:9/api/novu", testKey)
		require.ErrorIs(t, err, netguard.ErrRefused)
	})
}

func TestRedirects(t *testing.T) {
	t.Parallel()
	t.Run("followed with the body and signature", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/novu" {
				http.Redirect(w, r, "/api/novu/?"+r.URL.RawQuery, http.StatusPermanentRedirect)
				return
			}
			answerJSON(200, `{"outputs":{"body":"moved"}}`)(w, r)
		})
		res, err := client(Options{}).Execute(context.Background(), f.bridgeURL(), testKey,
			&ExecuteRequest{WorkflowID: "w", StepID: "s", Payload: json.RawMessage(`{"x":1}`)})
		require.NoError(t, err)
		require.Equal(t, "moved", res.Outputs["body"])
		calls := f.got()
		require.Len(t, calls, 2)
		require.Equal(t, string(calls[0].Body), string(calls[1].Body))
		require.Equal(t, "POST", calls[1].Method)
	})
	t.Run("a loop", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, r.URL.String(), http.StatusFound)
		})
		_, err := client(Options{}).Discover(context.Background(), f.bridgeURL(), testKey)
		be := asError(t, err)
		require.Equal(t, CodeTooManyRedirects, be.Code)
		require.Len(t, f.got(), maxRedirects+1)
	})
}
