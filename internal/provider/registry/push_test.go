package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/providertest"
)

// pushFakes are the wire fakes of the push providers.
var pushFakes = map[string]func(t *testing.T) providertest.Fake{}
