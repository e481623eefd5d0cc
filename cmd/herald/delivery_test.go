package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestServeDeliversOverTLS runs the real binary against a provider behind
// TLS with a CA of its own: SSL_CERT_FILE makes Herald trust it, and
// HERALD_ALLOW_PRIVATE_NETWORKS lets it reach loopback. (Without the CA the
// call is refused: provider.TestUntrustedCertificateIsPermanent.)
func TestServeDeliversOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fake := sendgridfake.New()
			defer fake.Close()
			origin, err := url.Parse(fake.URL())
			require.NoError(t, err)
			origin.Path = ""
			front := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(origin))
			defer front.Close()
			ca := filepath.Join(t.TempDir(), "ca.pem")
			require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw}), 0o600))

			env, _ := serveStore(t, kind)
			s := startServer(t, bin, append(env, "HERALD_ALLOW_PRIVATE_NETWORKS=true", "SSL_CERT_FILE="+ca))
			creds := map[string]any{"baseUrl": front.URL + "/sendgrid-proxy"}
			for k, v := range fake.Credentials() {
				if k != "baseUrl" {
					creds[k] = v
				}
			}
			status, out := s.call(t, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "active": true, "credentials": creds})
			require.Equal(t, http.StatusCreated, status, "%v", out)
			status, out = s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Welcome", "workflowId": "welcome", "steps": []any{
				map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "Hi {{subscriber.firstName}}", "body": "<p>Hello</p>"}}}})
			require.Equal(t, http.StatusCreated, status, "%v", out)
			status, out = s.call(t, "POST", "/v1/events/trigger", map[string]any{"name": "welcome",
				"to": map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"}})
			require.Equal(t, http.StatusCreated, status, "%v", out)
			require.Eventually(t, func() bool { return len(fake.Received()) == 1 }, 30*time.Second, 20*time.Millisecond)
			require.Equal(t, "Hi Ada", fake.Received()[0].Subject)
			require.Eventually(t, func() bool {
				_, out := s.call(t, "GET", "/v1/messages?channel=email", nil)
				data, _ := out.(map[string]any)["data"].([]any)
				return len(data) == 1 && data[0].(map[string]any)["status"] == "sent"
			}, 30*time.Second, 20*time.Millisecond)
		})
	}
}
