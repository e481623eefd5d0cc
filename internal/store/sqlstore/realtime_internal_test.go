package sqlstore

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

// TestInboxNotes: a large change is split into NOTIFY payloads under the
// limit that together carry every id once.
func TestInboxNotes(t *testing.T) {
	t.Parallel()
	ids := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%022d", prefix, i)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		subs, msgs int
		notes      int
	}{
		{name: "small", subs: 1, msgs: 1, notes: 1},
		{name: "counts only", subs: 3, notes: 1},
		{name: "a fan-out batch", subs: 500, msgs: 500, notes: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := store.InboxChange{EnvironmentID: "env", SubscriberIDs: ids("s", tc.subs), MessageIDs: ids("m", tc.msgs)}
			notes := inboxNotes("origin", []store.InboxChange{c})
			require.Len(t, notes, tc.notes)
			var subs, msgs []string
			for _, n := range notes {
				require.Less(t, len(n), 8000)
				var note inboxNote
				require.NoError(t, json.Unmarshal([]byte(n), &note))
				require.Equal(t, "origin", note.Origin)
				require.Equal(t, "env", note.EnvironmentID)
				subs, msgs = append(subs, note.SubscriberIDs...), append(msgs, note.MessageIDs...)
			}
			require.Equal(t, c.SubscriberIDs, subs)
			if tc.msgs == 0 {
				require.Empty(t, msgs)
			} else {
				require.Equal(t, c.MessageIDs, msgs)
			}
		})
	}
}
