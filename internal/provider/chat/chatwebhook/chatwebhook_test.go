package chatwebhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/chatwebhook"
	"github.com/herald-notify/herald/internal/provider/chat/chatwebhook/chatwebhookfake"
	"github.com/herald-notify/herald/internal/provider/chat/hook"
)

func config(creds provider.Credentials) provider.Config {
	return provider.Config{Credentials: creds,
		HTTP: &http.Client{Transport: (&netguard.Dialer{AllowPrivate: true}).Transport()}, Now: time.Now}
}

func send(t *testing.T, creds provider.Credentials, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := chatwebhook.New(config(creds))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

// RFC 4231 test case 2: HMAC-SHA256 with key "Jefe".
func TestSignVector(t *testing.T) {
	t.Parallel()
	require.Equal(t, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		chatwebhook.Sign("Jefe", []byte("what do ya want for nothing?")))
}

// captured is what a scripted receiver saw.
type captured struct {
	mu     sync.Mutex
	header http.Header
	body   []byte
	path   string
}

func receiver(t *testing.T, status int, answer string) (*httptest.Server, *captured) {
	t.Helper()
	c := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.header, c.body, c.path = r.Header.Clone(), b, r.URL.Path
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// The body is Novu's {content, webhookUrl}, serialized as JSON.stringify
// does, and the signature is over exactly those bytes.
func TestBodyAndSignature(t *testing.T) {
	t.Parallel()
	f := chatwebhookfake.New()
	defer f.Close()
	m := &provider.Message{Content: `<b>Deploy</b> & "done" ✓`, WebhookURL: f.WebhookURL()}
	res, err := send(t, f.Credentials(), m)
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1)
	require.Equal(t, got[0].MessageID, res.ProviderMessageID)
	want := `{"content":"<b>Deploy</b> & \"done\" ✓","webhookUrl":"` + f.WebhookURL() + `"}`
	require.Equal(t, want, string(got[0].Body))
	require.Equal(t, chatwebhook.Sign(f.Credentials().String("secretKey"), []byte(want)), got[0].Header.Get(chatwebhook.SignatureHeader))
	require.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
}

// Without a key (Novu does not require one) the call goes unsigned.
func TestUnsignedWithoutKey(t *testing.T) {
	t.Parallel()
	srv, c := receiver(t, http.StatusOK, `{"id":"r-1"}`)
	res, err := send(t, provider.Credentials{}, &provider.Message{Content: "hi", WebhookURL: srv.URL + "/hook"})
	require.NoError(t, err)
	require.Equal(t, "r-1", res.ProviderMessageID)
	require.Empty(t, c.header.Values(chatwebhook.SignatureHeader))
}

// As in Novu, the overrides may sign with their own key (never sent) and
// send the call to another URL (which the body then names).
func TestOverridesKeyAndDestination(t *testing.T) {
	t.Parallel()
	srv, c := receiver(t, http.StatusCreated, `{"id":"r-2"}`)
	other := srv.URL + "/elsewhere/0123456789abcdef0123"
	res, err := send(t, provider.Credentials{"secretKey": "integration-key"}, &provider.Message{
		Content: "hi", WebhookURL: "https://hooks.invalid/never-called",
		Overrides: map[string]any{"hmacSecretKey": "override-key", "webhookUrl": other, "channel": "ops"}})
	require.NoError(t, err)
	require.Equal(t, "r-2", res.ProviderMessageID)
	require.Equal(t, "/elsewhere/0123456789abcdef0123", c.path)
	require.Equal(t, chatwebhook.Sign("override-key", c.body), c.header.Get(chatwebhook.SignatureHeader))
	var body map[string]any
	require.NoError(t, json.Unmarshal(c.body, &body))
	require.Equal(t, map[string]any{"content": "hi", "webhookUrl": other, "channel": "ops"}, body)

	// An empty override keeps the engine's URL (Novu's `override || url`).
	res, err = send(t, provider.Credentials{}, &provider.Message{Content: "again", WebhookURL: srv.URL + "/engine",
		Overrides: map[string]any{"webhookUrl": ""}})
	require.NoError(t, err)
	require.Equal(t, "r-2", res.ProviderMessageID)
	require.Equal(t, "/engine", c.path)

	// No URL from the engine nor the overrides: nothing is sent.
	_, err = send(t, provider.Credentials{}, &provider.Message{Content: "hi"})
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, hook.Missing, pe.Reason)
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		answer string
		class  provider.Class
		reason string
	}{
		{400, `{"message":"content is required"}`, provider.Permanent, "content is required"},
		{401, `{"error":"invalid signature"}`, provider.Permanent, "invalid signature"},
		{404, `not here`, provider.Permanent, "not here"},
		{408, `{"error":{"message":"timeout"}}`, provider.Transient, "timeout"},
		{429, `{"message":"slow down"}`, provider.Transient, "slow down"},
		{503, ``, provider.Transient, "Service Unavailable"},
	} {
		srv, _ := receiver(t, tc.status, tc.answer)
		_, err := send(t, provider.Credentials{"secretKey": "k-0123456789"}, &provider.Message{Content: "x", WebhookURL: srv.URL + "/h"})
		pe := provider.AsError(err)
		require.Equal(t, tc.class, pe.Class, tc.answer)
		require.Equal(t, tc.reason, pe.Reason)
	}
}

// The key and the URL's token never show, even when the receiver echoes them.
func TestSecretsRedacted(t *testing.T) {
	t.Parallel()
	const token = "TOKEN-in-the-path-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "refused "+r.URL.Path+" "+string(b)+" sig "+r.Header.Get(chatwebhook.SignatureHeader)+" key secret-key-value")
	}))
	defer srv.Close()
	_, err := send(t, provider.Credentials{"secretKey": "secret-key-value"}, &provider.Message{Content: "x", WebhookURL: srv.URL + "/h/" + token})
	pe := provider.AsError(err)
	for _, s := range []string{token, "secret-key-value"} {
		require.NotContains(t, pe.Error(), s)
		require.NotContains(t, pe.Raw, s)
	}
	require.True(t, strings.Contains(pe.Raw, "[redacted]"))
}
