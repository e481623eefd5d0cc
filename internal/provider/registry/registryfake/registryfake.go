// Package registryfake starts the wire fake of any provider of the registry,
// by provider id: the shared provider suite and the end-to-end delivery tests
// run every registered provider through it, so a provider registered without
// a fake fails them. Like the fakes, it is never linked into the herald binary.
package registryfake

import (
	"github.com/herald-notify/herald/internal/provider/chat/chatwebhook/chatwebhookfake"
	"github.com/herald-notify/herald/internal/provider/chat/discord/discordfake"
	"github.com/herald-notify/herald/internal/provider/chat/mattermost/mattermostfake"
	"github.com/herald-notify/herald/internal/provider/chat/msteams/msteamsfake"
	"github.com/herald-notify/herald/internal/provider/chat/slack/slackfake"
	"github.com/herald-notify/herald/internal/provider/email/mailgun/mailgunfake"
	"github.com/herald-notify/herald/internal/provider/email/nodemailer/nodemailerfake"
	"github.com/herald-notify/herald/internal/provider/email/postmark/postmarkfake"
	"github.com/herald-notify/herald/internal/provider/email/resend/resendfake"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/provider/email/ses/sesfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/apns/apnsfake"
	"github.com/herald-notify/herald/internal/provider/push/expo/expofake"
	"github.com/herald-notify/herald/internal/provider/push/fcm/fcmfake"
	"github.com/herald-notify/herald/internal/provider/push/onesignal/onesignalfake"
	"github.com/herald-notify/herald/internal/provider/push/pushwebhook/pushwebhookfake"
	"github.com/herald-notify/herald/internal/provider/sms/genericsms/genericsmsfake"
	"github.com/herald-notify/herald/internal/provider/sms/nexmo/nexmofake"
	"github.com/herald-notify/herald/internal/provider/sms/plivo/plivofake"
	"github.com/herald-notify/herald/internal/provider/sms/sinch/sinchfake"
	"github.com/herald-notify/herald/internal/provider/sms/twilio/twiliofake"
)

// fakes are the fakes' constructors by provider id.
var fakes = map[string]func() providertest.Fake{
	// e-mail
	"sendgrid":   func() providertest.Fake { return sendgridfake.New() },
	"nodemailer": func() providertest.Fake { return nodemailerfake.New() },
	"resend":     func() providertest.Fake { return resendfake.New() },
	"postmark":   func() providertest.Fake { return postmarkfake.New() },
	"mailgun":    func() providertest.Fake { return mailgunfake.New() },
	"ses":        func() providertest.Fake { return sesfake.New() },
	// SMS
	"twilio":      func() providertest.Fake { return twiliofake.New() },
	"nexmo":       func() providertest.Fake { return nexmofake.New() },
	"plivo":       func() providertest.Fake { return plivofake.New() },
	"sinch":       func() providertest.Fake { return sinchfake.New() },
	"generic-sms": func() providertest.Fake { return genericsmsfake.New() },
	// chat
	"slack":        func() providertest.Fake { return slackfake.New() },
	"discord":      func() providertest.Fake { return discordfake.New() },
	"msteams":      func() providertest.Fake { return msteamsfake.New() },
	"mattermost":   func() providertest.Fake { return mattermostfake.New() },
	"chat-webhook": func() providertest.Fake { return chatwebhookfake.New() },
	// push
	"fcm":          func() providertest.Fake { return fcmfake.New() },
	"apns":         func() providertest.Fake { return apnsfake.New() },
	"expo":         func() providertest.Fake { return expofake.New() },
	"one-signal":   func() providertest.Fake { return onesignalfake.New() },
	"push-webhook": func() providertest.Fake { return pushwebhookfake.New() },
}

// New starts the wire fake of provider id on loopback; ok is false when
// the provider has none. The caller closes it.
func New(id string) (f providertest.Fake, ok bool) {
	newFake, ok := fakes[id]
	if !ok {
		return nil, false
	}
	return newFake(), true
}
