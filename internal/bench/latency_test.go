package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	var l Latencies
	require.Zero(t, l.Percentile(50))
	for i := 100; i >= 1; i-- {
		l.Add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		p    float64
		want time.Duration
	}{
		{"median", 50, 50 * time.Millisecond},
		{"p99", 99, 99 * time.Millisecond},
		{"max", 100, 100 * time.Millisecond},
		{"tiny", 0.1, time.Millisecond},
	} {
		require.Equal(t, tc.want, l.Percentile(tc.p), tc.name)
	}
	require.Equal(t, 100, l.Len())
}
