package provider

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCatalogue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id      string
		channel Channel
		kind    Kind
	}{
		{"svc", InApp, Delivery}, {"sendgrid", Email, Delivery}, {"braze", Email, Delivery},
		{"svc-email-agent", Email, Delivery}, {"twilio", SMS, Delivery}, {"cm-telecom", SMS, Delivery},
		{"fcm", Push, Delivery}, {"appio", Push, Delivery}, {"slack", Chat, Delivery}, {"svc-slack", Chat, Delivery},
		{"anthropic", "", Agent},
	} {
		info, ok := Lookup(tc.id)
		require.True(t, ok, tc.id)
		require.Equal(t, tc.channel, info.Channel, tc.id)
		require.Equal(t, tc.kind, info.Kind, tc.id)
	}
	_, ok := Lookup("carrier-pigeon")
	require.False(t, ok)
	// Every provider identifier of the API is known (OpenAPI ProviderId): 81 of them.
	require.Len(t, catalogue, 81)
}

func TestSubscriberCredentialProviders(t *testing.T) {
	t.Parallel()
	list := SubscriberCredentialProviders()
	require.Len(t, list, 20, "the API contract lists 20 providers")
	require.Equal(t, "slack", list[0])
	require.Equal(t, "appio", list[len(list)-1])
	for _, id := range list {
		require.True(t, SubscriberCredentialProvider(id), id)
	}
	for _, id := range []string{"svc", "sendgrid", "twilio", "anthropic", "nope"} {
		require.False(t, SubscriberCredentialProvider(id), id)
	}
	require.True(t, ValidChannel("push"))
	require.False(t, ValidChannel("fax"))
}
