package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGCPercent: serve sets GOGC to 300 unless the environment chose one.
func TestGCPercent(t *testing.T) {
	was := debug.SetGCPercent(100)
	defer debug.SetGCPercent(was)

	t.Setenv("GOGC", "")
	setGCPercent()
	require.Equal(t, defaultGCPercent, debug.SetGCPercent(100))

	t.Setenv("GOGC", "150") // read by the runtime at start: left alone
	setGCPercent()
	require.Equal(t, 100, debug.SetGCPercent(100))
}
