package fcm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/fcm"
	"github.com/herald-notify/herald/internal/provider/push/fcm/fcmfake"
)

// clock is a settable time shared by the sender and the fake.
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

func newSender(t *testing.T, f *fcmfake.Fake, now func() time.Time) provider.Sender {
	t.Helper()
	cfg := providertest.Config(f, f.Credentials(), true)
	if now != nil {
		cfg.Now = now
	}
	s, err := fcm.New(cfg)
	require.NoError(t, err)
	return s
}

func send(t *testing.T, s provider.Sender, tokens ...string) (*provider.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := providertest.Canonical(provider.Push, 1)
	m.Tokens = tokens
	return s.Send(ctx, m)
}

func TestAccessTokenCachedUntilExpiry(t *testing.T) {
	t.Parallel()
	f := fcmfake.New()
	defer f.Close()
	c := &clock{t: time.Now()}
	f.SetClock(c.now)
	s := newSender(t, f, c.now)

	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := send(t, s, fcmfake.Token(i))
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	_, err := send(t, s, fcmfake.Token(11))
	require.NoError(t, err)
	require.Equal(t, 1, f.TokenRequests(), "concurrent sends share one exchange")
	require.Len(t, f.Received(), 11)

	c.add(fcmfake.TokenLifetime - 5*time.Minute) // still valid, not yet near expiry
	_, err = send(t, s, fcmfake.Token(12))
	require.NoError(t, err)
	require.Equal(t, 1, f.TokenRequests())

	c.add(4 * time.Minute) // within the refresh margin: exchanged before it expires
	_, err = send(t, s, fcmfake.Token(13))
	require.NoError(t, err)
	require.Equal(t, 2, f.TokenRequests())

	c.add(2 * time.Hour) // long expired
	_, err = send(t, s, fcmfake.Token(14))
	require.NoError(t, err)
	require.Equal(t, 3, f.TokenRequests())
	require.Len(t, f.Received(), 14)
}

func TestRevokedAccessTokenIsExchangedAgain(t *testing.T) {
	t.Parallel()
	f := fcmfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	_, err := send(t, s, fcmfake.Token(1))
	require.NoError(t, err)
	f.RevokeTokens()
	_, err = send(t, s, fcmfake.Token(2))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, 401, pe.Status)
	require.Contains(t, pe.Reason, "UNAUTHENTICATED")
	_, err = send(t, s, fcmfake.Token(3))
	require.NoError(t, err, "the refused token is not reused")
	require.Equal(t, 2, f.TokenRequests())
}

func TestSeveralTokens(t *testing.T) {
	t.Parallel()
	f := fcmfake.New()
	defer f.Close()
	s := newSender(t, f, nil)

	// A malformed token is refused as invalid while the others get it.
	res, err := send(t, s, "not-a-token", fcmfake.Token(1), fcmfake.Token(2))
	require.NoError(t, err)
	require.Equal(t, []string{"not-a-token"}, res.InvalidTokens)
	got := f.Received()
	require.Len(t, got, 2)
	require.Equal(t, got[0].MessageID, res.ProviderMessageID, "the first delivered token's id")
	require.Equal(t, []string{fcmfake.Token(1)}, got[0].Tokens)

	// Every token unregistered: TokenInvalid with all of them.
	f.Fail(providertest.InvalidToken, 1)
	_, err = send(t, s, fcmfake.Token(3), "bad token")
	pe := provider.AsError(err)
	require.Equal(t, provider.TokenInvalid, pe.Class, pe.Error())
	require.Equal(t, []string{fcmfake.Token(3), "bad token"}, pe.InvalidTokens)

	// A transient failure beside an invalid token: transient, still listing it.
	f.Fail(providertest.Unavailable, 1)
	_, err = send(t, s, fcmfake.Token(4), "bad token")
	pe = provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class, pe.Error())
	require.Equal(t, []string{"bad token"}, pe.InvalidTokens)

	// A permanent failure that is not about the token stays permanent.
	f.Fail(providertest.Rejected, 1)
	_, err = send(t, s, fcmfake.Token(5))
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class, pe.Error())
	require.Empty(t, pe.InvalidTokens)
	require.Len(t, f.Received(), 2)
}

func TestDataValuesAreStrings(t *testing.T) {
	t.Parallel()
	f := fcmfake.New()
	defer f.Close()
	s := newSender(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := providertest.Canonical(provider.Push, 1)
	f.Address(m)
	m.Data = map[string]any{"s": "text", "n": 3, "o": map[string]any{"a": true}}
	m.Overrides = map[string]any{"android": map[string]any{"priority": "high"}}
	_, err := s.Send(ctx, m)
	require.NoError(t, err)
	d := f.Received()[0]
	require.Equal(t, map[string]any{"s": "text", "n": "3", "o": `{"a":true}`}, d.Data)
	require.Contains(t, string(d.Body), `"android":{"priority":"high"}`)
}

func TestTokenEndpointFailures(t *testing.T) {
	t.Parallel()
	f := fcmfake.New()
	defer f.Close()
	for _, tc := range []struct {
		status int
		class  provider.Class
	}{{503, provider.Transient}, {400, provider.Permanent}} {
		token := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid grant: account not found"}`))
		}))
		creds := f.Credentials()
		creds["serviceAccount"] = replaceTokenURI(t, creds.String("serviceAccount"), token.URL)
		cfg := providertest.Config(f, creds, true)
		s, err := fcm.New(cfg)
		require.NoError(t, err)
		_, err = send(t, s, fcmfake.Token(1))
		pe := provider.AsError(err)
		require.Equal(t, tc.class, pe.Class, pe.Error())
		require.Contains(t, pe.Reason, "token exchange")
		require.Zero(t, f.Requests(), "no send without an access token")
		token.Close()
	}
}

func TestMalformedServiceAccount(t *testing.T) {
	t.Parallel()
	for _, sa := range []string{"not json", `{"project_id":"p"}`,
		`{"project_id":"p","client_email":"e","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}`} {
		_, err := fcm.New(provider.Config{Credentials: provider.Credentials{"serviceAccount": sa}})
		pe := provider.AsError(err)
		require.Equal(t, provider.Permanent, pe.Class)
		require.NotContains(t, pe.Error(), "AAAA")
	}
}

// replaceTokenURI points a service-account JSON at another token endpoint.
func replaceTokenURI(t *testing.T, sa, uri string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(sa), &m))
	m["token_uri"] = uri
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}
