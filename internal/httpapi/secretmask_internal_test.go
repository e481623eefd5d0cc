package httpapi

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// TestSecretMaskIsTheEngines: a secret environment variable reads as the
// same mask in the API's answers and in previews (engine.PreviewEnv).
func TestSecretMaskIsTheEngines(t *testing.T) {
	t.Parallel()
	require.Equal(t, engine.SecretMask, envVarMask)
}
