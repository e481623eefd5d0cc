package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/sms/genericsms"
	"github.com/herald-notify/herald/internal/provider/sms/nexmo"
	"github.com/herald-notify/herald/internal/provider/sms/plivo"
	"github.com/herald-notify/herald/internal/provider/sms/sinch"
	"github.com/herald-notify/herald/internal/provider/sms/twilio"
)

// smsFakes are the wire fakes of the SMS providers.
var smsFakes = map[string]func(t *testing.T) providertest.Fake{
	"twilio":      func(*testing.T) providertest.Fake { return twilio.NewFake() },
	"nexmo":       func(*testing.T) providertest.Fake { return nexmo.NewFake() },
	"plivo":       func(*testing.T) providertest.Fake { return plivo.NewFake() },
	"sinch":       func(*testing.T) providertest.Fake { return sinch.NewFake() },
	"generic-sms": func(*testing.T) providertest.Fake { return genericsms.NewFake() },
}
