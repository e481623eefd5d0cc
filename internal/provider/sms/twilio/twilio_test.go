package twilio

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/sms/twilio/twiliofake"
)

func TestMessagingService(t *testing.T) {
	t.Parallel()
	f := twiliofake.New()
	defer f.Close()
	c := f.Credentials()
	c["from"] = "MG0123456789abcdef0123456789abcdef"
	s, err := New(providertest.Config(f, c, true))
	require.NoError(t, err)
	_, err = s.Send(context.Background(), providertest.Canonical(provider.SMS, 1))
	require.NoError(t, err)
	body := string(f.Received()[0].Body)
	require.Contains(t, body, "MessagingServiceSid=MG0123456789abcdef0123456789abcdef")
	require.NotContains(t, body, "From=")
}
