package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/liquid"
)

func TestTranslate(t *testing.T) {
	t.Parallel()
	texts := map[string]string{"a": "Hello {{ subscriber.firstName }}", "b.c": "{{t.a}}", "q": `say "hi"`}
	lookup := func(k string) (string, bool) { s, ok := texts[k]; return s, ok }
	sb := New(DefaultLimits)

	ordered := liquid.NewMap(2)
	ordered.Set("subject", "{{t.q}}")
	ordered.Set("body", "[{{t.a}}] [{{ t.b.c }}] [{{- t.a -}}] [{{ t.a | upcase }}] [{{x.t.a}}]")
	out, err := sb.Translate(map[string]any{"ctl": ordered, "list": []any{"{{t.q}}", 3}}, lookup)
	require.NoError(t, err)
	m := out.(map[string]any)
	got := m["ctl"].(*liquid.Map)
	require.Equal(t, []string{"subject", "body"}, got.Keys(), "the order is kept")
	body, _ := got.Get("body")
	// A translation is inserted once, never scanned again; a filtered
	// placeholder is Liquid's.
	require.Equal(t, "[Hello {{ subscriber.firstName }}] [{{t.a}}] [Hello {{ subscriber.firstName }}] [{{ t.a | upcase }}] [{{x.t.a}}]", body)
	require.Equal(t, []any{`say "hi"`, 3}, m["list"])

	// Then Liquid runs over the text: quotes in a translation are text.
	ctl, err := sb.Controls(map[string]any{"subject": "{{t.q}} {{t.a}}"}, nil)
	require.NoError(t, err)
	require.Equal(t, " ", ctl["subject"], "untranslated, t is a missing variable")
	tr, err := sb.Translate(map[string]any{"subject": "{{t.q}} {{t.a}}"}, lookup)
	require.NoError(t, err)
	ctl, err = sb.Controls(tr, map[string]any{"subscriber": map[string]any{"firstName": "Ada"}})
	require.NoError(t, err)
	require.Equal(t, `say "hi" Hello Ada`, ctl["subject"])

	_, err = sb.Translate(map[string]any{"x": map[string]any{"y": "{{t.nope}}"}}, lookup)
	var se *Error
	require.True(t, errors.As(err, &se))
	require.Equal(t, ReasonTranslation, se.Reason)
	require.Equal(t, "x.y", se.Field)

	require.True(t, HasTranslations(ordered))
	require.False(t, HasTranslations(map[string]any{"a": "{{ payload.t.x }} t.x", "n": 1}))
}

func TestTranslateBudget(t *testing.T) {
	t.Parallel()
	sb := New(Limits{MaxSource: 1000, MaxTotal: 1500})
	big := strings.Repeat("x", 600)
	lookup := func(string) (string, bool) { return big, true }
	_, err := sb.Translate("{{t.a}}", lookup)
	require.NoError(t, err)
	var se *Error
	_, err = sb.Translate("{{t.a}}{{t.a}}", lookup)
	require.True(t, errors.As(err, &se))
	require.Equal(t, ReasonOutput, se.Reason, "one text over MaxSource")
	_, err = sb.Translate(map[string]any{"a": "{{t.a}}", "b": "{{t.a}}", "c": "{{t.a}}"}, lookup)
	require.True(t, errors.As(err, &se))
	require.Equal(t, ReasonOutput, se.Reason, "all of them over MaxTotal")
	// Thousands of placeholders stop at the budget, not after building them all.
	_, err = sb.Translate(strings.Repeat("{{t.a}}", 100_000), lookup)
	require.True(t, errors.As(err, &se))
}
