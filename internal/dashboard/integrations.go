package dashboard

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/textcheck"
)

// providerNames are the names users know the providers by; an id not
// listed shows as itself.
var providerNames = map[string]string{
	"sendgrid": "SendGrid", "nodemailer": "SMTP (Nodemailer)", "resend": "Resend", "postmark": "Postmark",
	"mailgun": "Mailgun", "ses": "Amazon SES", "twilio": "Twilio", "nexmo": "Vonage (Nexmo)", "plivo": "Plivo",
	"sinch": "Sinch", "generic-sms": "Generic SMS (HTTP)", "slack": "Slack", "discord": "Discord",
	"msteams": "Microsoft Teams", "mattermost": "Mattermost", "chat-webhook": "Chat webhook", "fcm": "Firebase Cloud Messaging (FCM)",
	"apns": "Apple Push Notification service (APNs)", "expo": "Expo Push", "one-signal": "OneSignal", "push-webhook": "Push webhook",
	"svc": "Herald Inbox",
}

type credentialJSON struct {
	Key      string `json:"key"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Secret   bool   `json:"secret"`
}

type providerJSON struct {
	ID          string           `json:"id"`
	Name        string           `json:"name"`
	Credentials []credentialJSON `json:"credentials"`
}

type channelJSON struct {
	Channel   string         `json:"channel"`
	Providers []providerJSON `json:"providers"`
}

// GET /dashboard/api/providers: the providers Herald delivers through,
// grouped by channel, each with the credential keys of its registry entry
// (the form the dashboard draws).
func (d *Dashboard) providerCatalogue(w http.ResponseWriter, r *http.Request, _ account) error {
	out := []channelJSON{}
	for _, ch := range []provider.Channel{provider.Email, provider.SMS, provider.Chat, provider.Push} {
		group := channelJSON{Channel: string(ch), Providers: []providerJSON{}}
		for _, pid := range d.delivery.Registry.IDs() {
			e, _ := d.delivery.Registry.Get(pid)
			if e.Channel != ch {
				continue
			}
			p := providerJSON{ID: pid, Name: providerName(pid), Credentials: []credentialJSON{}}
			for _, c := range e.Credentials {
				p.Credentials = append(p.Credentials, credentialJSON{Key: c.Key, Type: c.JSONType(), Required: c.Required, Secret: c.Secret})
			}
			group.Providers = append(group.Providers, p)
		}
		slices.SortFunc(group.Providers, func(a, b providerJSON) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, group)
	}
	// names: every provider's name, Herald's in-app one included (which is
	// no choice to add: each environment has it).
	writeJSON(w, http.StatusOK, map[string]any{"data": out, "names": providerNames})
	return nil
}

func providerName(pid string) string {
	if n, ok := providerNames[pid]; ok {
		return n
	}
	return pid
}

type sendTestJSON struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
	Content string `json:"content"`
}

type sendTestResultJSON struct {
	OK                bool   `json:"ok"`
	ProviderMessageID string `json:"providerMessageId,omitempty"`
	Status            int    `json:"status,omitempty"`
	Message           string `json:"message,omitempty"`
	Raw               string `json:"raw,omitempty"`
}

// maxTestText bounds the texts of a test message.
const maxTestText = 10_000

// POST /dashboard/api/env/{env}/integrations/{id}/test sends one message
// through the integration with the workers' provider path
// (engine.SendTest) and answers with the provider's answer: a 200 either
// way, {"ok": false, …} when the provider refused.
func (d *Dashboard) integrationSendTest(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	if !objectID.MatchString(r.PathValue("id")) {
		return errorf(http.StatusUnprocessableEntity, "An integration's id is 24 hexadecimal characters")
	}
	var in sendTestJSON
	if err := readJSON(w, r, &in); err != nil {
		return err
	}
	in.To = strings.TrimSpace(in.To)
	if in.To == "" || len(in.To) > 2048 || len(in.Subject) > maxTestText || len(in.Content) > maxTestText ||
		textcheck.Text(in.To+in.Subject+in.Content) != nil {
		return errorf(http.StatusUnprocessableEntity, "Give the recipient (to) of the test, and a subject and content of at most 10,000 bytes")
	}
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	integ, err := d.store.IntegrationGet(r.Context(), scope, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "No integration has the id "+quote(r.PathValue("id")))
	} else if err != nil {
		return err
	}
	if in.Subject == "" {
		in.Subject = "Test from Herald"
	}
	if in.Content == "" {
		in.Content = "This is a test message sent from Herald's dashboard."
	}
	m := &provider.Message{ID: id.New(), IdempotencyKey: id.New(), Subject: in.Subject, Content: in.Content}
	switch provider.Channel(integ.Channel) {
	case provider.Email:
		m.To, m.Text = []string{in.To}, in.Content
	case provider.SMS:
		m.To = []string{in.To}
	case provider.Chat:
		m.WebhookURL = in.To
	case provider.Push:
		m.Tokens = []string{in.To}
	default:
		return errorf(http.StatusUnprocessableEntity, "A "+integ.Channel+" integration sends through no provider to test")
	}
	res, err := engine.SendTest(r.Context(), d.delivery, integ, m)
	if err != nil {
		out := sendTestResultJSON{Message: err.Error()}
		if pe := provider.AsError(err); pe != nil {
			out.Status, out.Message, out.Raw = pe.Status, pe.Reason, pe.Raw
			if out.Message == "" {
				out.Message = err.Error()
			}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	writeJSON(w, http.StatusOK, sendTestResultJSON{OK: true, ProviderMessageID: res.ProviderMessageID, Raw: res.Raw})
	return nil
}
