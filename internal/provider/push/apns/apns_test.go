package apns_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push"
	"github.com/herald-notify/herald/internal/provider/push/apns"
	"github.com/herald-notify/herald/internal/provider/push/apns/apnsfake"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newSender(t *testing.T, f *apnsfake.Fake, now func() time.Time) provider.Sender {
	t.Helper()
	cfg := providertest.Config(f, f.Credentials(), true)
	if now != nil {
		cfg.Now = now
	}
	s, err := apns.New(cfg)
	require.NoError(t, err)
	return s
}

func message(n int, tokens ...string) *provider.Message {
	m := providertest.Canonical(provider.Push, n)
	m.Tokens = tokens
	return m
}

func send(t *testing.T, s provider.Sender, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestProviderTokenReusedThenRefreshed(t *testing.T) {
	t.Parallel()
	f := apnsfake.New()
	defer f.Close()
	c := &clock{t: time.Now()}
	f.SetClock(c.now)
	s := newSender(t, f, c.now)
	for i := range 5 {
		_, err := send(t, s, message(i, apnsfake.Token(i)))
		require.NoError(t, err)
	}
	require.Equal(t, 1, f.ProviderTokens())
	c.add(49 * time.Minute)
	_, err := send(t, s, message(5, apnsfake.Token(5)))
	require.NoError(t, err)
	require.Equal(t, 1, f.ProviderTokens(), "reused within 50 minutes")
	c.add(2 * time.Minute)
	_, err = send(t, s, message(6, apnsfake.Token(6)))
	require.NoError(t, err)
	require.Equal(t, 2, f.ProviderTokens(), "signed again before Apple's hour runs out")
}

func TestRequest(t *testing.T) {
	t.Parallel()
	f := apnsfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	m := message(1, apnsfake.Token(1), apnsfake.Token(2))
	m.Data = map[string]any{"postId": "42", "n": 3, "aps": "ignored"}
	m.Overrides = map[string]any{"sound": "ping.aiff", "badge": 3, "mutableContent": 1, "campaign": "spring"}
	res, err := send(t, s, m)
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 2)
	d := got[0]
	require.Equal(t, d.MessageID, res.ProviderMessageID)
	require.Equal(t, push.UUID(m.IdempotencyKey, apnsfake.Token(1)), d.MessageID, "apns-id derived from the key and token")
	require.Equal(t, push.UUID(m.IdempotencyKey, apnsfake.Token(2)), got[1].MessageID)
	require.Equal(t, "com.herald.test", d.Header.Get("apns-topic"))
	require.Equal(t, "alert", d.Header.Get("apns-push-type"))
	require.Equal(t, "10", d.Header.Get("apns-priority"))

	var body map[string]any
	require.NoError(t, json.Unmarshal(d.Body, &body))
	require.Equal(t, map[string]any{
		"alert": map[string]any{"title": m.Subject, "body": m.Content},
		"sound": "ping.aiff", "badge": float64(3), "mutable-content": float64(1),
	}, body["aps"])
	require.Equal(t, "42", body["postId"])
	require.Equal(t, float64(3), body["n"])
	require.Equal(t, "spring", body["campaign"])

	// A retry of the same delivery carries the same apns-id.
	_, err = send(t, s, message(1, apnsfake.Token(1)))
	require.NoError(t, err)
	require.Equal(t, d.MessageID, f.Received()[2].MessageID)
}

func TestSeveralTokens(t *testing.T) {
	t.Parallel()
	f := apnsfake.New()
	defer f.Close()
	s := newSender(t, f, nil)

	res, err := send(t, s, message(1, "not-hex", apnsfake.Token(1)))
	require.NoError(t, err)
	require.Equal(t, []string{"not-hex"}, res.InvalidTokens, "400 BadDeviceToken")
	require.Len(t, f.Received(), 1)

	f.Fail(providertest.InvalidToken, 1)
	_, err = send(t, s, message(2, apnsfake.Token(2), "not-hex"))
	pe := provider.AsError(err)
	require.Equal(t, provider.TokenInvalid, pe.Class, pe.Error())
	require.Equal(t, []string{apnsfake.Token(2), "not-hex"}, pe.InvalidTokens)

	// 429 is about one device: the next token is still tried.
	f.Fail(providertest.RateLimited, 1)
	res, err = send(t, s, message(3, apnsfake.Token(3), apnsfake.Token(4)))
	require.NoError(t, err)
	require.Equal(t, f.Received()[1].MessageID, res.ProviderMessageID)
	require.Equal(t, []string{apnsfake.Token(4)}, f.Received()[1].Tokens)

	// A refused provider token stops the send: every token would fail alike.
	bad, err := apns.New(providertest.Config(f, f.BadCredentials(), true))
	require.NoError(t, err)
	before := f.Requests()
	_, err = send(t, bad, message(4, apnsfake.Token(5), apnsfake.Token(6)))
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, "InvalidProviderToken", pe.Reason)
	require.Equal(t, before+1, f.Requests())
}

func TestFakeRefusesHTTP1(t *testing.T) {
	t.Parallel()
	f := apnsfake.New()
	defer f.Close()
	cfg := providertest.Config(f, f.Credentials(), true)
	cfg.HTTP = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: f.Roots(),
		MinVersion: tls.VersionTLS12}}}
	s, err := apns.New(cfg)
	require.NoError(t, err)
	_, err = send(t, s, message(1, apnsfake.Token(1)))
	require.Error(t, err)
	require.Equal(t, 505, provider.AsError(err).Status)
	require.Empty(t, f.Received())
}

func TestKeyMustBeP256(t *testing.T) {
	t.Parallel()
	_, err := apns.ParseKey("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n")
	require.Error(t, err)
	_, err = apns.ParseKey("not pem")
	require.Error(t, err)
}
