package registry

import "github.com/herald-notify/herald/internal/provider"

// push lists the push providers.
var push = []provider.Entry{}
