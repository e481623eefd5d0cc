package registry

import (
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/sms/genericsms"
	"github.com/herald-notify/herald/internal/provider/sms/nexmo"
	"github.com/herald-notify/herald/internal/provider/sms/plivo"
	"github.com/herald-notify/herald/internal/provider/sms/sinch"
	"github.com/herald-notify/herald/internal/provider/sms/twilio"
)

// sms lists the SMS providers.
var sms = []provider.Entry{twilio.Entry, nexmo.Entry, plivo.Entry, sinch.Entry, genericsms.Entry}
