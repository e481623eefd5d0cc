package registry

import "github.com/herald-notify/herald/internal/provider"

// chat lists the chat providers.
var chat = []provider.Entry{}
