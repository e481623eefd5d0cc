package nexmo

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/sms/nexmo/nexmofake"
)

func TestUnicodeAndNumbers(t *testing.T) {
	t.Parallel()
	require.True(t, isGSM7("Your code is 42 @ £5 {ok}"))
	require.False(t, isGSM7("Your code is 42 ✓"))
	f := nexmofake.New()
	defer f.Close()
	s, err := New(providertest.Config(f, f.Credentials(), true))
	require.NoError(t, err)
	m := providertest.Canonical(provider.SMS, 1) // ends with ✓
	_, err = s.Send(context.Background(), m)
	require.NoError(t, err)
	body := string(f.Received()[0].Body)
	require.Contains(t, body, `"type":"unicode"`)
	require.Contains(t, body, `"to":"15555550100"`, "E.164 without the plus")
	m.Content = "plain text"
	_, err = s.Send(context.Background(), m)
	require.NoError(t, err)
	require.False(t, strings.Contains(string(f.Received()[1].Body), `"type"`))
}
