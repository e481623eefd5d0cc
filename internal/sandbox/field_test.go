package sandbox

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSyntaxErrorField: a syntax error names the control the broken output
// or tag is in, even when it is left open and the parser notices only in a
// later control (the controls render as one document, in their order).
func TestSyntaxErrorField(t *testing.T) {
	t.Parallel()
	s := New(Limits{})
	for _, tc := range []struct {
		order []string
		want  string
	}{
		{[]string{"subject", "body"}, "subject"},
		{[]string{"body", "subject"}, "subject"},
	} {
		values := map[string]any{"subject": "Hi {{subscriber.firstName", "body": "{{payload.greeting}}"}
		_, err := s.Controls(Ordered(values, tc.order), vars())
		var se *Error
		require.True(t, errors.As(err, &se), "%v", err)
		require.Equal(t, ReasonSyntax, se.Reason)
		require.Equal(t, tc.want, se.Field, "order %v: %s", tc.order, se.Msg)
	}
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"subject": "{{ a }}", "body": "{{ payload.x "}, "body"},
		{map[string]any{"subject": "{% if %}", "body": "b"}, "subject"},
		{map[string]any{"subject": "ok {{ a }}", "body": "{% for %}"}, "body"},
	} {
		_, err := s.Controls(Ordered(tc.values, []string{"subject", "body"}), vars())
		var se *Error
		require.True(t, errors.As(err, &se), "%v", err)
		require.Equal(t, tc.want, se.Field, "%v: %s", tc.values, se.Msg)
	}
}
