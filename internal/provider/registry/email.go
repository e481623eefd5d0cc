package registry

import "github.com/herald-notify/herald/internal/provider"

// email lists the email providers.
var email = []provider.Entry{}
