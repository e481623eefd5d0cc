package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWritersFor: one committer on two cores, half the cores on more, up
// to maxTriggerWriters.
func TestWritersFor(t *testing.T) {
	t.Parallel()
	for cores, want := range map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 8: 4, 16: 8, 64: 8} {
		require.Equal(t, want, writersFor(cores), "%d cores", cores)
	}
}
