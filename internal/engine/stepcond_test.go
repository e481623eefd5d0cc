package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

// TestConditionOfFollowsEdits: a step's parsed condition is reused while
// its rule is the same, and parsed again when an edit (same workflow and
// step ids, even at the same instant) changes it.
func TestConditionOfFollowsEdits(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	step := func(skip any) *store.Step {
		return &store.Step{ID: "step-1", Type: "in_app", ControlValues: map[string]any{"body": "x", "skip": skip}}
	}
	wf := store.Workflow{ID: "wf-cond-edit", UpdatedAt: at}
	vip := map[string]any{"==": []any{map[string]any{"var": "payload.vip"}, true}}
	first := conditionOf(wf, step(vip))
	require.NotNil(t, first)
	again := conditionOf(wf, step(map[string]any{"==": []any{map[string]any{"var": "payload.vip"}, true}}))
	require.Same(t, first, again, "the same rule is parsed once")
	edited := conditionOf(wf, step(map[string]any{"==": []any{map[string]any{"var": "payload.vip"}, false}}))
	require.NotSame(t, first, edited)
	runs, err := edited.rule.Runs(map[string]any{"payload": map[string]any{"vip": false}}, at)
	require.NoError(t, err)
	require.True(t, runs, "the edited rule decides")
	require.True(t, edited.readsRoot("payload"))
	require.False(t, edited.readsRoot("steps"))
	require.Nil(t, conditionOf(wf, step(map[string]any{})), "{} always runs")
	bad := conditionOf(wf, step(map[string]any{"frobnicate": []any{1}}))
	require.Error(t, bad.err)
}

func BenchmarkConditionOf(b *testing.B) {
	wf := store.Workflow{ID: "wf-bench"}
	st := &store.Step{ID: "s", ControlValues: map[string]any{"skip": map[string]any{"and": []any{
		map[string]any{"notNull": []any{map[string]any{"var": "payload.order"}}},
		map[string]any{"in": []any{"A-", map[string]any{"var": "payload.order"}}},
		map[string]any{"!=": []any{map[string]any{"var": "subscriber.data.tier"}, "blocked"}},
	}}}}
	for b.Loop() {
		if conditionOf(wf, st) == nil {
			b.Fatal("no condition")
		}
	}
}
