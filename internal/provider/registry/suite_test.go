package registry

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/registry/registryfake"
)

// The providers Herald delivers through, by channel (docs/delivery.md's table).
var required = map[string][]string{
	"email": {"nodemailer", "sendgrid", "resend", "postmark", "mailgun", "ses"},
	"sms":   {"twilio", "nexmo", "plivo", "sinch", "generic-sms"},
	"chat":  {"slack", "discord", "msteams", "mattermost", "chat-webhook"},
	"push":  {"fcm", "apns", "expo", "one-signal", "push-webhook"},
}

// TestEveryProvider runs the shared suite against every registered
// provider's wire fake.
func TestEveryProvider(t *testing.T) {
	t.Parallel()
	r := Default()
	for _, id := range r.IDs() {
		e, _ := r.Get(id)
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			providertest.Run(t, e, func(t *testing.T) providertest.Fake {
				f, ok := registryfake.New(id)
				require.True(t, ok, "provider %s has no wire fake in registryfake", id)
				return f
			})
		})
	}
}

// TestRegistryComplete checks every provider of required is registered on its channel.
func TestRegistryComplete(t *testing.T) {
	t.Parallel()
	r := Default()
	for ch, ids := range required {
		for _, id := range ids {
			e, ok := r.Get(id)
			require.True(t, ok, "%s is not registered", id)
			require.Equal(t, ch, string(e.Channel), id)
		}
	}
}
