package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
