package hook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/provider"
)

const token = "xoxb-SECRET-token-0123456789abcdef"

func TestParseRefusesWhatCannotBeSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, reason string }{
		{"", Missing},
		{"   ", Missing},
		{"ftp://hooks.example.com/" + token, "must be http or https"},
		{"javascript:alert('" + token + "')", "must be http or https"},
		{"/services/" + token, "must be http or https"},
		{"https:///" + token, "has no host"},
		{"https://hooks.example.com/%zz" + token, "not a valid URL"},
	} {
		_, err := Parse(tc.raw)
		pe := provider.AsError(err)
		require.Equal(t, provider.Permanent, pe.Class, tc.raw)
		require.Contains(t, pe.Reason, tc.reason, tc.raw)
		require.NotContains(t, pe.Error(), "SECRET", "the URL never shows in the failure")
	}
	tg, err := Parse(" https://hooks.example.com/services/T1/B2/" + token + " ")
	require.NoError(t, err)
	require.Equal(t, "https://hooks.example.com/services/T1/B2/"+token, tg.String())
}

func TestSecretsRedactEveryPartOfTheURL(t *testing.T) {
	t.Parallel()
	raw := "https://user:pa55w0rd@flows.example.com/workflows/8d6f4b2a0c1e3f5a7b9d/invoke?api-version=1&sig=" + token
	tg, err := Parse(raw)
	require.NoError(t, err)
	secrets := tg.Secrets("cred-secret-value")
	for i := 1; i < len(secrets); i++ {
		require.GreaterOrEqual(t, len(secrets[i-1]), len(secrets[i]), "longest first")
	}
	texts := []string{
		raw,
		"posting to " + tg.URL.Redacted() + " failed",
		"bad sig " + token,
		"sig=" + url.QueryEscape(token),
		"workflow 8d6f4b2a0c1e3f5a7b9d not found",
		"password pa55w0rd",
		"key cred-secret-value",
	}
	for _, txt := range texts {
		got := provider.Redact(txt, secrets)
		require.NotContains(t, got, token)
		require.NotContains(t, got, "8d6f4b2a0c1e3f5a7b9d")
		require.NotContains(t, got, "pa55w0rd")
		require.NotContains(t, got, "cred-secret-value")
		require.Contains(t, got, "[redacted]")
	}
	// Short, common segments are not secrets.
	require.Equal(t, "workflows invoke", provider.Redact("workflows invoke", secrets))
}

func TestDoScrubsTheURLFromTheCause(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens any more: a connection failure
	tg, err := Parse(addr + "/hooks/" + token)
	require.NoError(t, err)
	req, err := provider.JSONRequest(tg.String(), map[string]any{"text": "hi"}, tg.Secrets())
	require.NoError(t, err)
	client := &http.Client{Transport: (&netguard.Dialer{AllowPrivate: true}).Transport()}
	_, err = Do(context.Background(), client, req)
	pe := provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class, pe.Error())
	require.NotContains(t, pe.Error(), token)
	require.NotContains(t, fmt.Sprintf("%v %+v", err, errors.Unwrap(err)), token)

	// Refused by the guard: permanent, still recognisable, still no token.
	client = &http.Client{Transport: (&netguard.Dialer{}).Transport()}
	_, err = Do(context.Background(), client, req)
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.ErrorIs(t, err, netguard.ErrRefused)
	require.NotContains(t, fmt.Sprintf("%v %+v", err, errors.Unwrap(err)), token)
}

func TestText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "invalid_token", Text([]byte("  invalid_token\n")))
	require.Equal(t, "first", Text([]byte("first\r\nsecond")))
	require.Equal(t, "", Text([]byte("<html><body>502 Bad Gateway</body></html>")))
	long := Text([]byte(strings.Repeat("é", 400)))
	require.LessOrEqual(t, len(long), maxReason+len("…"))
	require.True(t, strings.HasSuffix(long, "…"))
}
