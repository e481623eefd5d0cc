package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/providertest"
)

// chatFakes are the wire fakes of the chat providers.
var chatFakes = map[string]func(t *testing.T) providertest.Fake{}
