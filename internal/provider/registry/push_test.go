package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/apns"
	"github.com/herald-notify/herald/internal/provider/push/expo"
	"github.com/herald-notify/herald/internal/provider/push/fcm"
	"github.com/herald-notify/herald/internal/provider/push/onesignal"
	"github.com/herald-notify/herald/internal/provider/push/pushwebhook"
)

// pushFakes are the wire fakes of the push providers.
var pushFakes = map[string]func(t *testing.T) providertest.Fake{
	"fcm":          func(*testing.T) providertest.Fake { return fcm.NewFake() },
	"apns":         func(*testing.T) providertest.Fake { return apns.NewFake() },
	"expo":         func(*testing.T) providertest.Fake { return expo.NewFake() },
	"one-signal":   func(*testing.T) providertest.Fake { return onesignal.NewFake() },
	"push-webhook": func(*testing.T) providertest.Fake { return pushwebhook.NewFake() },
}
