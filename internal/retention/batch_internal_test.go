package retention

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNextSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		size, want int
		took       time.Duration
	}{
		{"on target", 500, 500, BatchTime},
		{"twice too long: halved", 500, 250, 2 * BatchTime},
		{"quick: at most doubled", 500, 1000, BatchTime / 10},
		{"no time measured: doubled", 500, 1000, 0},
		{"never below 10", 20, 10, time.Second},
		{"never above MaxBatch", 4000, MaxBatch, time.Millisecond},
	} {
		require.Equal(t, tc.want, nextSize(tc.size, tc.took), tc.name)
	}
}
