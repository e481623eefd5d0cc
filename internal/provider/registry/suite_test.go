package registry

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/providertest"
)

// The providers the delivery issue names, by channel.
var required = map[string][]string{
	"email": {"nodemailer", "sendgrid", "resend", "postmark", "mailgun", "ses"},
	"sms":   {"twilio", "nexmo", "plivo", "sinch", "generic-sms"},
	"chat":  {"slack", "discord", "msteams", "mattermost", "chat-webhook"},
	"push":  {"fcm", "apns", "expo", "one-signal", "push-webhook"},
}

func fakes() map[string]func(t *testing.T) providertest.Fake {
	all := map[string]func(t *testing.T) providertest.Fake{}
	for _, m := range []map[string]func(t *testing.T) providertest.Fake{emailFakes, smsFakes, chatFakes, pushFakes} {
		maps.Copy(all, m)
	}
	return all
}

// TestEveryProvider runs the shared suite against every registered
// provider's wire fake.
func TestEveryProvider(t *testing.T) {
	t.Parallel()
	r := Default()
	all := fakes()
	for _, id := range r.IDs() {
		e, _ := r.Get(id)
		newFake, ok := all[id]
		require.True(t, ok, "provider %s has no wire fake", id)
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			providertest.Run(t, e, newFake)
		})
	}
}

// TestRegistryComplete checks every provider the delivery issue names is registered on its channel.
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
