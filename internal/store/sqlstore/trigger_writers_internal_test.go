package sqlstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWritersFor: one committer on two cores next to the database, half
// the cores on more, up to maxTriggerWriters; at least two across a
// network.
func TestWritersFor(t *testing.T) {
	t.Parallel()
	for cores, want := range map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 8: 4, 16: 8, 64: 8} {
		require.Equal(t, want, writersFor(cores, 100*time.Microsecond), "%d cores next to the database", cores)
	}
	for cores, want := range map[int]int{1: 2, 2: 2, 4: 2, 8: 4, 16: 8} {
		require.Equal(t, want, writersFor(cores, 2200*time.Microsecond), "%d cores across a network", cores)
	}
}
