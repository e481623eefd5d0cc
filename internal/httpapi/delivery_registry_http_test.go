package httpapi_test

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/registry"
	"github.com/herald-notify/herald/internal/provider/registry/registryfake"
)

// TestEveryProviderOverHTTP: every provider of the registry is created
// through POST /v1/integrations with the credential keys its entry documents
// (the fake's values: pointed at its wire fake), and a triggered workflow's
// step of its channel reaches the fake. The table is the registry itself, so
// a provider registered later is covered here once registryfake starts its
// fake.
func TestEveryProviderOverHTTP(t *testing.T) {
	t.Parallel()
	reg := registry.Default()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, session := h.authFor(asDev), h.authFor(asSession)
		for _, id := range reg.IDs() {
			e, _ := reg.Get(id)
			t.Run(id, func(t *testing.T) {
				f, ok := registryfake.New(id)
				require.True(t, ok, "%s has no wire fake in registryfake", id)
				defer f.Close()

				// The integration, with the keys the entry documents and nothing else.
				fakeCreds := f.Credentials()
				creds := map[string]any{}
				for _, k := range e.Credentials {
					if v, ok := fakeCreds[k.Key]; ok {
						creds[k.Key] = v
					}
				}
				require.Len(t, creds, len(fakeCreds), "the fake's credentials are keys the entry documents")
				for _, k := range e.Required() {
					require.Contains(t, creds, k, "the fake sets every key the entry requires")
				}
				identifier := "every-" + id
				res := h.call(t, session, "POST", "/v1/integrations", map[string]any{"providerId": id,
					"identifier": identifier, "active": true, "credentials": creds}, nil)
				require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
				in := res.Object(t)
				sent, err := json.Marshal(creds)
				require.NoError(t, err)
				stored, err := json.Marshal(in["credentials"])
				require.NoError(t, err)
				require.JSONEq(t, string(sent), string(stored), "the credentials are kept as sent")

				// A subscriber reachable on the channel: a contact, or channel credentials at the fake.
				sid := "every-" + id
				sub := map[string]any{"subscriberId": sid, "firstName": "Ada"}
				switch e.Channel {
				case provider.Email:
					sub["email"] = "ada@example.com"
				case provider.SMS:
					sub["phone"] = "+15555550123"
				}
				h.createSubscriber(t, dev, sub)
				where := &provider.Message{}
				f.Address(where)
				switch e.Channel {
				case provider.Chat:
					credentialsOf(h, t, sid, map[string]any{"providerId": id, "credentials": map[string]any{"webhookUrl": where.WebhookURL}})
				case provider.Push:
					credentialsOf(h, t, sid, map[string]any{"providerId": id, "credentials": map[string]any{"deviceTokens": where.Tokens}})
				}

				controls := map[string]any{"body": "Sent through " + id}
				if e.Channel == provider.Email || e.Channel == provider.Push {
					controls["subject"] = "Hello {{subscriber.firstName}}"
				}
				h.createWorkflow(t, dev, map[string]any{"name": "Every " + id, "workflowId": identifier, "steps": []any{
					map[string]any{"name": "Send", "type": string(e.Channel), "controlValues": controls}}})
				tx := "tx-every-" + id
				h.trigger(t, dev, map[string]any{"name": identifier, "to": sid, "transactionId": tx,
					"overrides": map[string]any{string(e.Channel): map[string]any{"integrationIdentifier": identifier}}})
				var trust *tls.Config
				if roots := f.Roots(); roots != nil {
					trust = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
				}
				drain(t, h.newEngine(engine.Options{Now: (&testClock{t: time.Now().Add(time.Minute)}).Now,
					Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true, TLS: trust}}))

				job := h.jobsOf(t, tx)[0]
				require.Equal(t, "completed", job["status"], "%v", detailTexts(t, job))
				got := f.Received()
				require.Len(t, got, 1, "the fake received the message")
				d := got[0]
				require.Contains(t, d.Content+d.HTML+d.Text, "Sent through "+id)
				if e.Channel == provider.Email || e.Channel == provider.Push {
					require.Equal(t, "Hello Ada", d.Subject)
				}
				msgs := objects(t, h.messages(t, url.Values{"channel": {string(e.Channel)}, "transactionId": {tx}})["data"])
				require.Len(t, msgs, 1)
				require.Equal(t, "sent", msgs[0]["status"])
				require.Equal(t, id, msgs[0]["providerId"])
				require.Equal(t, in["_id"], msgs[0]["_integrationId"])
			})
		}
	})
}
