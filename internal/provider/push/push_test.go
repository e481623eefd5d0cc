package push_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/push"
)

func TestOutcome(t *testing.T) {
	t.Parallel()
	refused := func() *provider.Error { return push.Refused(410, "Unregistered", `{"reason":"Unregistered"}`) }

	var o push.Outcome
	o.Invalid("a", refused())
	o.Delivered("id-b")
	o.Delivered("id-c")
	o.Answer("answer")
	res, err := o.Result()
	require.NoError(t, err)
	require.Equal(t, "id-b", res.ProviderMessageID)
	require.Equal(t, []string{"a"}, res.InvalidTokens)
	require.Equal(t, "answer", res.Raw)

	o = push.Outcome{}
	o.Invalid("a", refused())
	o.Invalid("b", refused())
	_, err = o.Result()
	pe := provider.AsError(err)
	require.Equal(t, provider.TokenInvalid, pe.Class)
	require.Equal(t, []string{"a", "b"}, pe.InvalidTokens)
	require.Equal(t, 410, pe.Status)

	o = push.Outcome{}
	o.Failed(&provider.Error{Class: provider.Permanent, Status: 400, Reason: "bad"})
	o.Invalid("a", refused())
	o.Failed(&provider.Error{Class: provider.Transient, Status: 503, Reason: "later"})
	_, err = o.Result()
	pe = provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class, "any transient failure makes the send worth retrying")
	require.Equal(t, []string{"a"}, pe.InvalidTokens)

	_, err = (&push.Outcome{}).Result()
	require.Equal(t, provider.Permanent, provider.AsError(err).Class)
}

func TestUUID(t *testing.T) {
	t.Parallel()
	a := push.UUID("herald-job-1", "token")
	require.True(t, push.IsUUID(a), a)
	require.Equal(t, a, push.UUID("herald-job-1", "token"), "stable across retries")
	require.NotEqual(t, a, push.UUID("herald-job-1", "token2"))
	require.NotEqual(t, push.UUID("ab", "c"), push.UUID("a", "bc"))
	require.Equal(t, byte('5'), a[14], "version 5")
	require.Contains(t, "89ab", string(a[19]), "RFC 9562 variant")
	require.False(t, push.IsUUID("herald-job-1"))
	require.True(t, push.IsUUID("6B1E0C52-8F3A-4D2E-9C41-27D05A6E13B8"))
}
