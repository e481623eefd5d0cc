package dashboard

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
)

func TestFailureLimiter(t *testing.T) {
	t.Parallel()
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newFailureLimiter(2, time.Minute, func() time.Time { return now })
	blocked, _ := l.blocked("a")
	require.False(t, blocked)
	l.fail("a", "x")
	l.fail("a")
	blocked, wait := l.blocked("b", "a")
	require.True(t, blocked, "a is out of tries")
	require.Equal(t, "60", wait)
	blocked, _ = l.blocked("x")
	require.False(t, blocked, "x failed once")
	now = now.Add(59*time.Second + 500*time.Millisecond)
	blocked, wait = l.blocked("a")
	require.True(t, blocked)
	require.Equal(t, "1", wait)
	now = now.Add(time.Second)
	blocked, _ = l.blocked("a")
	require.False(t, blocked, "a new window")

	for i := range maxTrackedKeys {
		l.fail(string(rune(i)))
	}
	now = now.Add(time.Minute)
	l.fail("y")
	require.Len(t, l.keys, 1, "ended windows are forgotten once the limiter is full")
}

func TestCheckEmail(t *testing.T) {
	t.Parallel()
	got, err := CheckEmail(" Ada@Example.COM ")
	require.NoError(t, err)
	require.Equal(t, "ada@example.com", got)
	for _, bad := range []string{"", "ada", "Ada <ada@example.com>", "ada@example.com\x00", "a@b@c", string(make([]byte, 300))} {
		_, err := CheckEmail(bad)
		require.Error(t, err, "%q", bad)
	}
}

// TestPreviewStepTypes: the preview takes the step types the public API
// takes, as its schema (WorkflowStepType) lists them.
func TestPreviewStepTypes(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas struct {
				WorkflowStepType struct {
					Enum []string `json:"enum"`
				} `json:"WorkflowStepType"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(httpapi.OpenAPIJSON(), &doc))
	require.Equal(t, doc.Components.Schemas.WorkflowStepType.Enum, stepTypes)
}
