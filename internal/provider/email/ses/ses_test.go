package ses

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/ses/sesfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

func sendWith(t *testing.T, cfg provider.Config, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestTheFakeChecksTheSignature(t *testing.T) {
	t.Parallel()
	f := sesfake.New()
	defer f.Close()
	for name, tc := range map[string]struct {
		change func(*provider.Config)
		typ    string
	}{
		"a clock 20 minutes behind": {func(c *provider.Config) {
			c.Now = func() time.Time { return time.Now().Add(-20 * time.Minute) }
		}, "Signature expired"},
		"another region's scope": {func(c *provider.Config) {
			c.Credentials["region"] = "eu-west-1"
		}, "SignatureDoesNotMatch"},
		"an unknown key id": {func(c *provider.Config) {
			c.Credentials["apiKey"] = "AKIAUNKNOWN000000000"
		}, "UnrecognizedClientException"},
	} {
		cfg := providertest.Config(f, f.Credentials(), true)
		tc.change(&cfg)
		_, err := sendWith(t, cfg, providertest.Canonical(provider.Email, 1))
		pe := provider.AsError(err)
		require.Equal(t, provider.Permanent, pe.Class, name)
		require.Equal(t, http.StatusForbidden, pe.Status, name)
		require.Contains(t, pe.Reason, tc.typ, name)
	}
	require.Empty(t, f.Received())
}

func TestThrottlingIsTransientWhateverTheStatus(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Maximum sending rate exceeded."}`))
	}))
	defer srv.Close()
	f := sesfake.New()
	defer f.Close()
	cfg := providertest.Config(f, f.Credentials(), true)
	cfg.Credentials["baseUrl"] = srv.URL
	_, err := sendWith(t, cfg, providertest.Canonical(provider.Email, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class)
	require.Equal(t, "ThrottlingException: Maximum sending rate exceeded.", pe.Reason)
}

func TestMessageRejectedIsPermanent(t *testing.T) {
	t.Parallel()
	f := sesfake.New()
	defer f.Close()
	f.Fail(providertest.Rejected, 1)
	_, err := sendWith(t, providertest.Config(f, f.Credentials(), true), providertest.Canonical(provider.Email, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Contains(t, pe.Reason, "MessageRejected: Email address is not verified")
}

func TestDefaultOriginIsTheRegionsEndpoint(t *testing.T) {
	t.Parallel()
	s, err := New(provider.Config{Credentials: provider.Credentials{"apiKey": "AK", "secretKey": "SK", "region": "eu-central-1",
		"from": "a@b.c"}})
	require.NoError(t, err)
	require.Equal(t, "https://email.eu-central-1.amazonaws.com/v2/email/outbound-emails", s.(*sender).url.String())
	_, err = New(provider.Config{Credentials: provider.Credentials{"apiKey": "AK", "secretKey": "SK"}})
	require.Error(t, err)
}
