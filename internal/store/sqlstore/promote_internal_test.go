package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

// TestEveryResourceKindHasAPromoter: the kinds a publish promotes and the
// promoters that read and write them are the same list.
func TestEveryResourceKindHasAPromoter(t *testing.T) {
	t.Parallel()
	require.Len(t, promoters, len(store.ResourceKinds))
	for _, k := range store.ResourceKinds {
		require.Contains(t, promoters, k)
	}
}
