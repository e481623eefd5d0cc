package id

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNewIsValidUniqueAndOrdered(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	prev := ""
	for range 10000 {
		v := New()
		require.True(t, Valid(v), v)
		require.False(t, seen[v], "duplicate %s", v)
		seen[v] = true
		require.GreaterOrEqual(t, v[:8], prev, "time part goes backwards")
		prev = v[:8]
	}
	early := NewAt(time.Unix(1000, 0))
	require.Less(t, early, New())
}

func TestValid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"ok", "5f9d1c2e3a4b5c6d7e8f9a0b", true},
		{"short", "5f9d1c2e3a4b5c6d7e8f9a0", false},
		{"upper", "5F9D1C2E3A4B5C6D7E8F9A0B", false},
		{"nonhex", "5f9d1c2e3a4b5c6d7e8f9a0z", false},
		{"empty", "", false},
	} {
		require.Equal(t, tc.want, Valid(tc.in), tc.name)
	}
}
