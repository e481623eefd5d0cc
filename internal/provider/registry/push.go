package registry

import (
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/push/apns"
	"github.com/herald-notify/herald/internal/provider/push/expo"
	"github.com/herald-notify/herald/internal/provider/push/fcm"
	"github.com/herald-notify/herald/internal/provider/push/onesignal"
	"github.com/herald-notify/herald/internal/provider/push/pushwebhook"
)

// push lists the push providers.
var push = []provider.Entry{fcm.Entry, apns.Entry, expo.Entry, onesignal.Entry, pushwebhook.Entry}
