package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/providertest"
)

// smsFakes are the wire fakes of the sms providers.
var smsFakes = map[string]func(t *testing.T) providertest.Fake{}
