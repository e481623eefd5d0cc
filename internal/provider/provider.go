// Package provider is Herald's catalogue of delivery providers: every provider
// identifier of the API, the channel it delivers on, and which providers can
// hold per-subscriber channel credentials.
package provider

// Channel is a delivery channel.
type Channel string

// The delivery channels.
const (
	InApp Channel = "in_app"
	Email Channel = "email"
	SMS   Channel = "sms"
	Chat  Channel = "chat"
	Push  Channel = "push"
)

// Channels lists the delivery channels in the API's order.
var Channels = []Channel{InApp, Email, SMS, Chat, Push}

// ValidChannel reports whether c names a delivery channel.
func ValidChannel(c string) bool {
	for _, ch := range Channels {
		if string(ch) == c {
			return true
		}
	}
	return false
}

// Kind tells a delivery integration from an agent one.
type Kind string

// The integration kinds.
const (
	Delivery Kind = "delivery"
	Agent    Kind = "agent"
)

// InAppProvider is the built-in in-app provider.
const InAppProvider = "svc"

var (
	email = []string{"emailjs", "mailgun", "mailjet", "mandrill", "nodemailer", "postmark", "sendgrid",
		"sendinblue", "ses", "netcore", "infobip-email", "resend", "plunk", "mailersend", "mailtrap",
		"clickatell", "outlook365", "svc-email", "sparkpost", "email-webhook", "braze", "svc-email-agent"}
	sms = []string{"nexmo", "plivo", "sms77", "sms-central", "sns", "telnyx", "twilio", "gupshup",
		"firetext", "infobip-sms", "burst-sms", "bulk-sms", "isend-sms", "forty-six-elks", "kannel",
		"maqsam", "termii", "africas-talking", "svc-sms", "sendchamp", "generic-sms", "clicksend",
		"bandwidth", "messagebird", "simpletexting", "azure-sms", "ring-central", "brevo-sms", "eazy-sms",
		"mobishastra", "afro-message", "unifonic", "smsmode", "imedia", "sinch", "isendpro-sms", "cm-telecom"}
	push = []string{"fcm", "apns", "expo", "one-signal", "pushpad", "push-webhook", "pusher-beams", "appio"}
	chat = []string{"slack", "discord", "msteams", "mattermost", "ryver", "zulip", "grafana-on-call",
		"getstream", "rocket-chat", "whatsapp-business", "chat-webhook", "svc-slack"}
	agents = []string{"anthropic"}
)

// Info describes one provider.
type Info struct {
	ID      string
	Channel Channel // empty for agent providers
	Kind    Kind
}

var catalogue = func() map[string]Info {
	m := map[string]Info{InAppProvider: {ID: InAppProvider, Channel: InApp, Kind: Delivery}}
	for ch, ids := range map[Channel][]string{Email: email, SMS: sms, Push: push, Chat: chat} {
		for _, id := range ids {
			m[id] = Info{ID: id, Channel: ch, Kind: Delivery}
		}
	}
	for _, id := range agents {
		m[id] = Info{ID: id, Kind: Agent}
	}
	return m
}()

// Lookup returns the provider with that identifier.
func Lookup(id string) (Info, bool) {
	i, ok := catalogue[id]
	return i, ok
}

// SubscriberCredentialProvider reports whether subscribers can hold channel
// credentials for the provider (the chat and push providers).
func SubscriberCredentialProvider(id string) bool {
	i, ok := catalogue[id]
	return ok && (i.Channel == Chat || i.Channel == Push)
}

// SubscriberCredentialProviders lists them in the API's order.
func SubscriberCredentialProviders() []string {
	return append(append([]string{}, chat...), push...)
}
