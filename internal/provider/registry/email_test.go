package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/email/mailgun"
	"github.com/herald-notify/herald/internal/provider/email/nodemailer"
	"github.com/herald-notify/herald/internal/provider/email/postmark"
	"github.com/herald-notify/herald/internal/provider/email/resend"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid"
	"github.com/herald-notify/herald/internal/provider/email/ses"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// emailFakes are the wire fakes of the e-mail providers.
var emailFakes = map[string]func(t *testing.T) providertest.Fake{
	"sendgrid":   func(*testing.T) providertest.Fake { return sendgrid.NewFake() },
	"nodemailer": func(*testing.T) providertest.Fake { return nodemailer.NewFake() },
	"resend":     func(*testing.T) providertest.Fake { return resend.NewFake() },
	"postmark":   func(*testing.T) providertest.Fake { return postmark.NewFake() },
	"mailgun":    func(*testing.T) providertest.Fake { return mailgun.NewFake() },
	"ses":        func(*testing.T) providertest.Fake { return ses.NewFake() },
}
