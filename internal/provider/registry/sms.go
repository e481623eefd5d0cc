package registry

import "github.com/herald-notify/herald/internal/provider"

// sms lists the sms providers.
var sms = []provider.Entry{}
