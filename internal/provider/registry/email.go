package registry

import (
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/nodemailer"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid"
)

// email lists the e-mail providers.
var email = []provider.Entry{sendgrid.Entry, nodemailer.Entry}
