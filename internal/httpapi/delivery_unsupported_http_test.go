package httpapi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
)

// An integration of a provider Herald does not deliver through yet is
// passed over for one it does; alone, it fails the step honestly.
func TestUnsupportedProviderPassedOver(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createIntegration(t, dev, map[string]any{"providerId": "mailjet", "identifier": "mailjet", "active": true})
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		eng := h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)})

		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-mailjet-only"})
		drain(t, eng)
		mail := h.jobsOf(t, "tx-mailjet-only")[0]
		require.Equal(t, "failed", mail["status"])
		require.Contains(t, detailTexts(t, mail), "Herald does not deliver through mailjet yet: nothing was sent")

		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-sendgrid")
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-mailjet-and-sendgrid"})
		drain(t, eng)
		require.Equal(t, "completed", h.jobsOf(t, "tx-mailjet-and-sendgrid")[0]["status"])
		require.Len(t, f.Received(), 1, "the primary (mailjet) is passed over for SendGrid")
	})
}
