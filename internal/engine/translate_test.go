package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

func TestTranslationText(t *testing.T) {
	t.Parallel()
	content := map[string]any{
		"email.subject": "flat",
		"email":         map[string]any{"body": "nested", "deep": map[string]any{"x.y": "mixed"}, "n": float64(3), "obj": map[string]any{}},
		"yes":           true,
	}
	for key, want := range map[string]string{"email.subject": "flat", "email.body": "nested", "email.deep.x.y": "mixed",
		"email.n": "3", "yes": "true"} {
		got, ok := TranslationText(content, key)
		require.True(t, ok, key)
		require.Equal(t, want, got, key)
	}
	for _, key := range []string{"email", "email.obj", "nope", "email.body.x", ""} {
		_, ok := TranslationText(content, key)
		require.False(t, ok, key)
	}
	// Objects nested under dotted keys cannot make a look-up exponential.
	var deep map[string]any
	for range 40 {
		deep = map[string]any{"a": deep, "a.a": deep}
	}
	_, ok := TranslationText(deep, strings.Repeat("a.", 39)+"b")
	require.False(t, ok)
	require.Equal(t, "fr_FR", NormalizeLocale(" fr-FR "))
}

// countingTranslations counts the reads of its sets.
type countingTranslations struct{ reads int }

func (c *countingTranslations) TranslationSetFor(_ context.Context, k *store.TranslationKey) (store.TranslationSet, error) {
	c.reads++
	return store.TranslationSet{Any: true, Locale: store.JSON(`{"hi":"` + k.Locale + `"}`)}, nil
}

// TestMemoTranslations: a planning reads each set once, whatever the
// number of recipients that render with it.
func TestMemoTranslations(t *testing.T) {
	t.Parallel()
	c := &countingTranslations{}
	m := memoTranslations(c)
	key := func(locale string) *store.TranslationKey {
		return &store.TranslationKey{ResourceType: store.TranslationWorkflow, ResourceID: "w", Locale: locale}
	}
	for range 3 {
		for _, l := range []string{"fr_FR", "de_DE"} {
			set, err := m.TranslationSetFor(t.Context(), key(l))
			require.NoError(t, err)
			require.JSONEq(t, `{"hi":"`+l+`"}`, string(set.Locale))
		}
	}
	require.Equal(t, 2, c.reads, "one read per set")
	require.Nil(t, memoTranslations(nil))
}
