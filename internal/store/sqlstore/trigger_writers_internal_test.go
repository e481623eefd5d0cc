package sqlstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWritersFor: one committer next to the database or on few cores; more
// as the round trip grows, bounded by a quarter of the cores and the pool.
func TestWritersFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rtt   time.Duration
		cores int
		want  int
	}{
		{100 * time.Microsecond, 16, 1},
		{2500 * time.Microsecond, 2, 1},
		{2500 * time.Microsecond, 16, 4},
		{600 * time.Microsecond, 16, 2},
		{10 * time.Millisecond, 64, 8},
		{0, 0, 1},
	} {
		require.Equal(t, tc.want, writersFor(tc.rtt, tc.cores), "%s on %d cores", tc.rtt, tc.cores)
	}
}
