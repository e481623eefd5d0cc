package secret

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	k, err := Derive("a-server-secret-of-some-length")
	require.NoError(t, err)
	sealed := k.Seal([]byte(`{"apiKey":"SG.very-secret"}`))
	require.NotContains(t, sealed, "very-secret")
	require.NotEqual(t, sealed, k.Seal([]byte(`{"apiKey":"SG.very-secret"}`)), "nonce must differ")
	out, err := k.Open(sealed)
	require.NoError(t, err)
	require.Equal(t, `{"apiKey":"SG.very-secret"}`, string(out))

	other, err := Derive("another-server-secret-entirely")
	require.NoError(t, err)
	_, err = other.Open(sealed)
	require.Error(t, err)
	_, err = k.Open("v1:!!!")
	require.Error(t, err)
	_, err = k.Open(sealed[:len(sealed)-2])
	require.Error(t, err)
}

func TestDeriveRejectsShortSecret(t *testing.T) {
	t.Parallel()
	_, err := Derive("short")
	require.Error(t, err)
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	a, b := NewAPIKey(), NewAPIKey()
	require.NotEqual(t, a, b)
	require.True(t, strings.HasPrefix(a, "hk_"))
	require.Len(t, HashAPIKey(a), 64)
	require.Equal(t, HashAPIKey(a), HashAPIKey(a))
	require.NotContains(t, HashAPIKey(a), a[3:])
}

func TestSessionTokens(t *testing.T) {
	t.Parallel()
	k, err := Derive("a-server-secret-of-some-length")
	require.NoError(t, err)
	s := Session{MemberID: "m", OrganizationID: "o", EnvironmentID: "e", ExpiresAt: time.Now().Add(time.Hour)}
	tok, err := k.SignSession(s)
	require.NoError(t, err)
	got, err := k.VerifySession(tok)
	require.NoError(t, err)
	require.Equal(t, "m", got.MemberID)
	require.Equal(t, "e", got.EnvironmentID)

	expired, err := k.SignSession(Session{MemberID: "m", ExpiresAt: time.Now().Add(-time.Minute)})
	require.NoError(t, err)
	_, err = k.VerifySession(expired)
	require.Error(t, err)

	other, _ := Derive("another-server-secret-entirely")
	_, err = other.VerifySession(tok)
	require.Error(t, err)
	_, err = k.VerifySession(tok + "x")
	require.Error(t, err)
}
