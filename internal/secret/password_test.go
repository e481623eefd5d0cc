package secret_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/secret"
)

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h, err := secret.HashPassword("correct horse battery")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$"), h)
	require.NotContains(t, h, "correct horse")
	require.NoError(t, secret.CheckPassword(h, "correct horse battery"))
	require.ErrorIs(t, secret.CheckPassword(h, "correct horse batterY"), secret.ErrPasswordMismatch)
	require.ErrorIs(t, secret.CheckPassword(h, strings.Repeat("x", 5000)), secret.ErrPasswordMismatch)

	h2, err := secret.HashPassword("correct horse battery")
	require.NoError(t, err)
	require.NotEqual(t, h, h2, "salted")

	_, err = secret.HashPassword("short")
	require.Error(t, err)
	_, err = secret.HashPassword(strings.Repeat("x", secret.MaxPasswordLength+1))
	require.Error(t, err)
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=99999999,t=1,p=1$AA$AA",
		"$argon2id$v=19$m=8,t=1,p=1$!!$AA"} {
		err := secret.CheckPassword(bad, "whatever1")
		require.Error(t, err, bad)
		require.NotErrorIs(t, err, secret.ErrPasswordMismatch, bad)
	}
}

func TestSessionToken(t *testing.T) {
	t.Parallel()
	tok, hash := secret.NewSessionToken()
	require.Len(t, tok, 43)
	require.Equal(t, hash, secret.HashSessionToken(tok))
	tok2, _ := secret.NewSessionToken()
	require.NotEqual(t, tok, tok2)
}
