package genericsms

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/sms/genericsms/genericsmsfake"
)

func TestTokenFlow(t *testing.T) {
	t.Parallel()
	f := genericsmsfake.NewTokenAuth()
	defer f.Close()
	s, err := New(providertest.Config(f, f.Credentials(), true))
	require.NoError(t, err)
	for i := range 3 {
		m := providertest.Canonical(provider.SMS, i)
		res, err := s.Send(context.Background(), m)
		require.NoError(t, err)
		require.Equal(t, f.Received()[i].MessageID, res.ProviderMessageID, "the id read at idPath")
		require.NotContains(t, res.Raw, "tok-", "the token is redacted from what Herald keeps")
	}
	require.Equal(t, 1, f.TokensIssued(), "one token for many sends")
	got := f.Received()
	require.Equal(t, "tok-1", got[2].Header.Get("X-Auth-Token"))
	require.Equal(t, "Herald", got[0].From)
}

func TestTokenRefused(t *testing.T) {
	t.Parallel()
	f := genericsmsfake.NewTokenAuth()
	defer f.Close()
	s, err := New(providertest.Config(f, f.BadCredentials(), true))
	require.NoError(t, err)
	_, err = s.Send(context.Background(), providertest.Canonical(provider.SMS, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Zero(t, f.Requests(), "no send without a token")
}

func TestBadSettings(t *testing.T) {
	t.Parallel()
	f := genericsmsfake.New()
	defer f.Close()
	c := f.Credentials()
	c["apiKeyRequestHeader"] = "Bad Header:"
	_, err := New(providertest.Config(f, c, true))
	require.Error(t, err)
	c = f.Credentials()
	c["authenticateByToken"] = true
	_, err = New(providertest.Config(f, c, true))
	require.Error(t, err, "token auth needs its key name")
}
