package postmark

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/postmark/postmarkfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

func sendTo(t *testing.T, f providertest.Fake, creds provider.Credentials, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := New(providertest.Config(f, creds, true))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestHeadersAndMetadata(t *testing.T) {
	t.Parallel()
	f := postmarkfake.New()
	defer f.Close()
	m := providertest.Canonical(provider.Email, 1)
	m.Headers = map[string]string{"X-B": "2", "X-A": "1"}
	_, err := sendTo(t, f, f.Credentials(), m)
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1)
	var body struct {
		Headers  []map[string]string
		Metadata map[string]string
		To, Cc   string
	}
	require.NoError(t, json.Unmarshal(got[0].Body, &body))
	require.Equal(t, []map[string]string{{"Name": "X-A", "Value": "1"}, {"Name": "X-B", "Value": "2"}}, body.Headers)
	require.Equal(t, m.ID, body.Metadata["heraldMessageId"])
	require.Equal(t, "ada@example.com", body.To)
}

func TestInactiveRecipientIsPermanent(t *testing.T) {
	t.Parallel()
	f := postmarkfake.New()
	defer f.Close()
	f.Fail(providertest.Rejected, 1)
	_, err := sendTo(t, f, f.Credentials(), providertest.Canonical(provider.Email, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusUnprocessableEntity, pe.Status)
	require.Contains(t, pe.Reason, "ErrorCode 406")
}

func TestErrorCodeInA200IsNoSend(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"ErrorCode":405,"Message":"Not allowed to send: you have run out of credits."}`))
	}))
	defer srv.Close()
	f := postmarkfake.New()
	defer f.Close()
	creds := f.Credentials()
	creds["baseUrl"] = srv.URL
	_, err := sendTo(t, f, creds, providertest.Canonical(provider.Email, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Contains(t, pe.Reason, "run out of credits")
}
