package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/providertest"
)

// emailFakes are the wire fakes of the email providers.
var emailFakes = map[string]func(t *testing.T) providertest.Fake{}
