package registry

import (
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/mailgun"
	"github.com/herald-notify/herald/internal/provider/email/nodemailer"
	"github.com/herald-notify/herald/internal/provider/email/postmark"
	"github.com/herald-notify/herald/internal/provider/email/resend"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid"
	"github.com/herald-notify/herald/internal/provider/email/ses"
)

// email lists the e-mail providers.
var email = []provider.Entry{sendgrid.Entry, nodemailer.Entry, resend.Entry, postmark.Entry, mailgun.Entry, ses.Entry}
