package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProviderCatalogue: the providers grouped by channel, by the names
// users know, each with its registry entry's credential keys.
func TestProviderCatalogue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite")
	requireError(t, f.do(req{method: "GET", path: "/dashboard/api/providers"}), http.StatusUnauthorized)
	tok := f.signIn()
	rec := f.do(req{method: "GET", path: "/dashboard/api/providers", cookie: tok})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out struct {
		Data []struct {
			Channel   string `json:"channel"`
			Providers []struct {
				ID          string `json:"id"`
				Name        string `json:"name"`
				Credentials []struct {
					Key      string `json:"key"`
					Required bool   `json:"required"`
					Secret   bool   `json:"secret"`
				} `json:"credentials"`
			} `json:"providers"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	var all struct {
		Names map[string]string `json:"names"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &all))
	require.Equal(t, "Herald Inbox", all.Names["svc"])
	names := map[string]string{}
	for _, g := range out.Data {
		for _, p := range g.Providers {
			names[g.Channel+"/"+p.ID] = p.Name
			if p.ID == "sendgrid" {
				require.Equal(t, "apiKey", p.Credentials[0].Key)
				require.True(t, p.Credentials[0].Required)
				require.True(t, p.Credentials[0].Secret)
			}
		}
	}
	for k, v := range map[string]string{"email/sendgrid": "SendGrid", "email/nodemailer": "SMTP (Nodemailer)", "sms/twilio": "Twilio",
		"chat/slack": "Slack", "push/fcm": "Firebase Cloud Messaging (FCM)"} {
		require.Equal(t, v, names[k], k)
	}
}

// TestIntegrationSendTest: Send test goes through the provider (a local
// chat webhook here) and answers with the provider's answer, success or
// refusal; an in-app integration, another environment's, or a bad body
// is a 4xx.
func TestIntegrationSendTest(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		var mu sync.Mutex
		var got []string
		status := http.StatusOK
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(b))
			w.WriteHeader(status)
			io.WriteString(w, `{"ok":true}`) //nolint:errcheck
		}))
		defer hook.Close()

		tok := f.signIn()
		rec := f.do(req{method: "POST", path: "/dashboard/api/env/development/v1/integrations", cookie: tok,
			body: `{"providerId":"chat-webhook","channel":"chat","name":"Hook","credentials":{},"active":true}`})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		var created struct {
			ID string `json:"_id"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
		id := created.ID
		require.Len(t, id, 24, rec.Body.String())
		path := "/dashboard/api/env/development/integrations/" + id + "/test"

		rec = f.do(req{method: "POST", path: path, cookie: tok, body: `{"to":"` + hook.URL + `","content":"Hello hook"}`})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"ok":true`)
		mu.Lock()
		require.Len(t, got, 1)
		require.Contains(t, got[0], "Hello hook")
		status = http.StatusBadRequest
		mu.Unlock()

		rec = f.do(req{method: "POST", path: path, cookie: tok, body: `{"to":"` + hook.URL + `"}`})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var refused map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &refused))
		require.Equal(t, false, refused["ok"])
		require.EqualValues(t, 400, refused["status"])
		require.NotEmpty(t, refused["message"])

		requireError(t, f.do(req{method: "POST", path: strings.Replace(path, "development", "production", 1), cookie: tok,
			body: `{"to":"` + hook.URL + `"}`}), http.StatusNotFound)
		requireError(t, f.do(req{method: "POST", path: path, cookie: tok, body: `{"to":""}`}), http.StatusUnprocessableEntity)
		requireError(t, f.do(req{method: "POST", path: "/dashboard/api/env/development/integrations/nope/test", cookie: tok,
			body: `{"to":"x"}`}), http.StatusUnprocessableEntity)
		requireError(t, f.do(req{method: "POST", path: path, body: `{"to":"x"}`}), http.StatusUnauthorized)

		rec = f.do(req{method: "GET", path: "/dashboard/api/env/development/v1/integrations", cookie: tok})
		var list []struct {
			ID      string `json:"_id"`
			Channel string `json:"channel"`
			Env     string `json:"_environmentId"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
		inApp := 0
		for _, in := range list {
			if in.Channel == "in_app" {
				requireError(t, f.do(req{method: "POST", path: "/dashboard/api/env/development/integrations/" + in.ID + "/test", cookie: tok,
					body: `{"to":"x"}`}), map[bool]int{true: http.StatusUnprocessableEntity, false: http.StatusNotFound}[inDev(t, f, in.Env)])
				inApp++
			}
		}
		require.Equal(t, 2, inApp, "each environment's in-app integration was tried")
	})
}

func inDev(t *testing.T, f *fixture, envID string) bool {
	env, err := f.db.EnvironmentGetByName(t.Context(), "development")
	require.NoError(t, err)
	return env.ID == envID
}
