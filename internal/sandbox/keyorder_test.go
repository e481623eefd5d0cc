package sandbox

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeyOrder(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"z", "a", "m"}, KeyOrder([]byte(`{"z":1,"a":{"b":[1,2]},"m":"x"}`)))
	require.Nil(t, KeyOrder([]byte(`[1]`)))
	require.Nil(t, KeyOrder([]byte(`{"a":`)))
}
