package httpstep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/stretchr/testify/require"
)

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

// publicAddr is what hooks.example resolves to in these tests: a public
// (documentation) address the guard allows. The dial hook connects it to
// the loopback test server, so no packet leaves the machine.
const publicAddr = "192.0.2.10"

// guarded is a client that refuses private networks, resolves names from
// names, and connects publicAddr to srv; any other dial fails the test.
func guarded(t *testing.T, srv *recorder, names map[string]string) *Client {
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	return New(&netguard.Dialer{
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
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
	})
}

func redirectTo(code int, loc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", loc)
		w.WriteHeader(code)
	}
}

func TestRedirectToAPrivateAddressIsRefused(t *testing.T) {
	t.Parallel()
	srv := record(t, redirectTo(302, "http://internal.example:8080/admin"))
	c := guarded(t, srv, map[string]string{"hooks.example": publicAddr, "internal.example": "10.0.0.1"})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	u := "http://hooks.example:" + port + "/start"

	res := send(c, map[string]any{"url": u, "body": `{"a":1}`})
	require.Equal(t, "The request was refused by the private-network guard: POST "+u+
		": internal.example resolves to 10.0.0.1, a loopback, private, link-local or metadata address"+
		" (HERALD_ALLOW_PRIVATE_NETWORKS=true allows it)", res.Failure)
	require.Zero(t, res.StatusCode)
	reqs := srv.requests()
	require.Len(t, reqs, 1, "the first hop reached the (public) server")
	require.Equal(t, "/start", reqs[0].Path)
}

func TestLoopbackIsRefusedBeforeConnecting(t *testing.T) {
	t.Parallel()
	srv := record(t, nil)
	for _, tc := range []struct {
		name string
		c    *Client
	}{
		{"a guard with hooks", New(&netguard.Dialer{Dial: noDial(t), Resolve: noResolve(t)})},
		{"the default guard", New(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := send(tc.c, map[string]any{"url": srv.URL + "/x"})
			require.True(t, strings.HasPrefix(res.Failure, "The request was refused by the private-network guard: POST "+srv.URL+"/x: 127.0.0.1 resolves to 127.0.0.1"), res.Failure)
			require.Zero(t, res.StatusCode)
		})
	}
	require.Empty(t, srv.requests())
}

func TestRedirects(t *testing.T) {
	t.Parallel()
	other := record(t, nil)
	srv := record(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/found":
			redirectTo(302, "/done-found")(w, r)
		case p == "/see-other":
			redirectTo(303, "/done-see-other")(w, r)
		case p == "/temporary":
			redirectTo(307, "/done")(w, r)
		case p == "/permanent":
			redirectTo(308, "done")(w, r)
		case p == "/away":
			redirectTo(302, other.URL+"/elsewhere")(w, r)
		case p == "/away-keeping-method":
			redirectTo(307, other.URL+"/elsewhere")(w, r)
		case p == "/loop":
			redirectTo(302, "/loop")(w, r)
		case strings.HasPrefix(p, "/hops/"):
			var n int
			_, _ = fmt.Sscanf(p, "/hops/%d", &n)
			if n == 0 {
				_, _ = io.WriteString(w, `{"arrived":true}`)
				return
			}
			redirectTo(301, fmt.Sprintf("/hops/%d", n-1))(w, r)
		case p == "/ftp":
			redirectTo(302, "ftp://files.example/x")(w, r)
		case p == "/no-location":
			w.WriteHeader(302)
		default:
			_, _ = io.WriteString(w, `{"done":true}`)
		}
	})
	headers := []any{map[string]any{"key": "Authorization", "value": "Bearer t"}, map[string]any{"key": "X-Keep", "value": "k"}}

	t.Run("302 after a POST continues as a GET without body", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/found", "body": `{"a":1}`, "headers": headers})
		require.Empty(t, res.Failure)
		g := find(t, srv, "/done-found", "GET")
		require.Empty(t, g.Body)
		require.Empty(t, g.Header.Get("Content-Type"))
		require.Equal(t, "Bearer t", g.Header.Get("Authorization"), "same host keeps credentials")
	})
	t.Run("303 after a PUT continues as a GET", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/see-other", "method": "PUT", "body": `{"put":1}`})
		require.Empty(t, res.Failure)
		require.Empty(t, find(t, srv, "/done-see-other", "GET").Body)
	})
	for _, p := range []string{"/temporary", "/permanent"} {
		t.Run(p+" keeps the method, body and signature", func(t *testing.T) {
			t.Parallel()
			body := `{"keep":"` + p + `"}`
			res := send(local(), map[string]any{"url": srv.URL + p, "method": "PATCH", "body": body})
			require.Empty(t, res.Failure)
			require.Equal(t, map[string]any{"done": true}, res.Output())
			g := findBody(t, srv, "/done", body)
			require.Equal(t, "PATCH", g.Method)
			requireSigned(t, g)
		})
	}
	t.Run("to another host drops the body, credentials and signature", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/away", "method": "PUT", "body": `{"a":1}`, "headers": headers})
		require.Empty(t, res.Failure)
		g := find(t, other, "/elsewhere", "PUT")
		require.Empty(t, g.Body)
		require.Empty(t, g.Header.Get("Authorization"))
		require.Empty(t, g.Header.Get("Novu-Signature"))
		require.Equal(t, "k", g.Header.Get("X-Keep"))
	})
	t.Run("307 to another host is not followed", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/away-keeping-method", "body": `{"a":1}`})
		require.Equal(t, "POST "+srv.URL+"/away-keeping-method answered 307 to "+other.URL+
			"/elsewhere: a redirect that keeps the method and body to another host is not followed", res.Failure)
	})
	t.Run("five redirects are followed", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/hops/5", "method": "GET"})
		require.Empty(t, res.Failure)
		require.Equal(t, map[string]any{"arrived": true}, res.Output())
	})
	t.Run("six are not", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/hops/6", "method": "GET"})
		require.Equal(t, "GET "+srv.URL+"/hops/6 was redirected more than 5 times", res.Failure)
		res = send(local(), map[string]any{"url": srv.URL + "/loop", "method": "GET"})
		require.Equal(t, "GET "+srv.URL+"/loop was redirected more than 5 times", res.Failure)
	})
	t.Run("to another scheme is refused", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/ftp"})
		require.Equal(t, "POST "+srv.URL+`/ftp was redirected to "ftp://files.example/x", which is not an http or https URL`, res.Failure)
	})
	t.Run("a redirect without Location is the answer", func(t *testing.T) {
		t.Parallel()
		res := send(local(), map[string]any{"url": srv.URL + "/no-location"})
		require.Empty(t, res.Failure)
		require.Equal(t, 302, res.StatusCode)
	})
}

// find returns the one request srv saw at path with method.
func find(t *testing.T, srv *recorder, path, method string) got {
	t.Helper()
	var out []got
	for _, g := range srv.requests() {
		if g.Path == path && g.Method == method {
			out = append(out, g)
		}
	}
	require.Len(t, out, 1, "%s %s", method, path)
	return out[0]
}

// findBody returns the one request srv saw at path with body.
func findBody(t *testing.T, srv *recorder, path, body string) got {
	t.Helper()
	var out []got
	for _, g := range srv.requests() {
		if g.Path == path && string(g.Body) == body {
			out = append(out, g)
		}
	}
	require.Len(t, out, 1, "%s %s", path, body)
	return out[0]
}
