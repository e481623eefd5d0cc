package secret

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

func TestSubscriberHash(t *testing.T) {
	t.Parallel()
	// The value Python's hmac.new(b"hk_test-key", b"u-1", sha256).hexdigest() gives.
	const want = "c2d67f9ae567f5198099a649858aa36356fb82cf46a25899ff4d9c060f7b124a"
	require.Equal(t, want, SubscriberHash("hk_test-key", "u-1"))

	tests := []struct {
		name string
		hash string
		keys []string
		ok   bool
	}{
		{"the key", want, []string{"hk_test-key"}, true},
		{"one of the keys", want, []string{"hk_other", "hk_test-key"}, true},
		{"upper-case hex", strings.ToUpper(want), []string{"hk_test-key"}, true},
		{"another key", want, []string{"hk_other"}, false},
		{"no keys", want, nil, false},
		{"empty", "", []string{"hk_test-key"}, false},
		{"truncated", want[:62], []string{"hk_test-key"}, false},
		{"too long", want + "00", []string{"hk_test-key"}, false},
		{"not hex", "z" + want[1:], []string{"hk_test-key"}, false},
		{"another subscriber's", SubscriberHash("hk_test-key", "u-2"), []string{"hk_test-key"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.ok, SubscriberHashMatches(tc.hash, "u-1", tc.keys))
		})
	}
}

func TestApplicationIdentifier(t *testing.T) {
	t.Parallel()
	a, b := NewApplicationIdentifier(), NewApplicationIdentifier()
	require.NotEqual(t, a, b)
	require.Regexp(t, regexp.MustCompile(`^app_[0-9a-f]{20}$`), a)
}

func TestInboxSessionTokens(t *testing.T) {
	t.Parallel()
	k, err := Derive("a-server-secret-of-some-length")
	require.NoError(t, err)
	s := InboxSession{OrganizationID: "o", EnvironmentID: "e", SubscriberID: "s", ExternalID: "u-1", ExpiresAt: time.Now().Add(time.Hour)}
	tok, err := k.SignInboxSession(s)
	require.NoError(t, err)
	got, err := k.VerifyInboxSession(tok)
	require.NoError(t, err)
	require.Equal(t, s.SubscriberID, got.SubscriberID)
	require.Equal(t, s.ExternalID, got.ExternalID)
	require.Equal(t, s.EnvironmentID, got.EnvironmentID)
	require.Equal(t, s.OrganizationID, got.OrganizationID)

	_, err = k.VerifySession(tok)
	require.Error(t, err, "an inbox token is not a dashboard session")
	dash, err := k.SignSession(Session{MemberID: "m", OrganizationID: "o", EnvironmentID: "e", ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	_, err = k.VerifyInboxSession(dash)
	require.Error(t, err, "a dashboard token is not an inbox session")

	// Even signed with the other key, a token of the wrong kind is refused.
	forged, err := jwt.NewWithClaims(jwt.SigningMethodHS256, inboxClaims{Org: "o", Env: "e", Sub: "u-1",
		RegisteredClaims: jwt.RegisteredClaims{Issuer: issuer, Audience: jwt.ClaimStrings{inboxAudience}, Subject: "s",
			ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}}).SignedString(k.signing)
	require.NoError(t, err)
	_, err = k.VerifyInboxSession(forged)
	require.Error(t, err, "an inbox token signed with the dashboard key")
	_, err = k.VerifySession(forged)
	require.Error(t, err, "a dashboard-signed token with the inbox audience")
	noAudience, err := jwt.NewWithClaims(jwt.SigningMethodHS256, inboxClaims{Org: "o", Env: "e", Sub: "u-1",
		RegisteredClaims: jwt.RegisteredClaims{Issuer: issuer, Subject: "s",
			ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}}).SignedString(k.inboxSigning)
	require.NoError(t, err)
	_, err = k.VerifyInboxSession(noAudience)
	require.Error(t, err, "an inbox-signed token without the audience")

	expired, err := k.SignInboxSession(InboxSession{EnvironmentID: "e", SubscriberID: "s", ExpiresAt: time.Now().Add(-time.Minute)})
	require.NoError(t, err)
	_, err = k.VerifyInboxSession(expired)
	require.Error(t, err)
	other, err := Derive("another-server-secret-entirely")
	require.NoError(t, err)
	_, err = other.VerifyInboxSession(tok)
	require.Error(t, err)
	_, err = k.VerifyInboxSession(tok + "x")
	require.Error(t, err)
	_, err = k.SignInboxSession(InboxSession{EnvironmentID: "e", ExpiresAt: time.Now().Add(time.Hour)})
	require.Error(t, err, "a session names its subscriber")
}
