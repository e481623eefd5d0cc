package realtime

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePacket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		frame string
		want  Packet
		err   bool
	}{
		{name: "ping", frame: "2", want: Packet{Engine: '2', Namespace: "/"}},
		{name: "pong", frame: "3", want: Packet{Engine: '3', Namespace: "/"}},
		{name: "probe ping", frame: "2probe", want: Packet{Engine: '2', Namespace: "/", Data: "probe"}},
		{name: "close", frame: "1", want: Packet{Engine: '1', Namespace: "/"}},
		{name: "connect", frame: "40", want: Packet{Engine: '4', Socket: '0', Namespace: "/"}},
		{name: "connect with auth", frame: `40{"token":"t"}`, want: Packet{Engine: '4', Socket: '0', Namespace: "/", Data: `{"token":"t"}`}},
		{name: "connect to a namespace", frame: `40/admin,{"a":1}`, want: Packet{Engine: '4', Socket: '0', Namespace: "/admin", Data: `{"a":1}`}},
		{name: "namespace alone", frame: `40/admin`, want: Packet{Engine: '4', Socket: '0', Namespace: "/admin"}},
		{name: "disconnect", frame: "41", want: Packet{Engine: '4', Socket: '1', Namespace: "/"}},
		{name: "event with ack id", frame: `4212["e",1]`, want: Packet{Engine: '4', Socket: '2', Namespace: "/", Data: `["e",1]`}},
		{name: "empty", frame: "", err: true},
		{name: "unknown engine type", frame: "9", err: true},
		{name: "message without socket type", frame: "4", err: true},
		{name: "bad socket type", frame: "4x", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := ParsePacket(tc.frame)
			if tc.err {
				require.ErrorIs(t, err, ErrBadPacket)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, p)
		})
	}
}

func TestFrames(t *testing.T) {
	t.Parallel()
	open := OpenFrame("abc", 25000, 20000)
	require.Equal(t, byte('0'), open[0])
	var hs map[string]any
	require.NoError(t, json.Unmarshal([]byte(open[1:]), &hs))
	require.Equal(t, map[string]any{"sid": "abc", "upgrades": []any{}, "pingInterval": 25000.0, "pingTimeout": 20000.0,
		"maxPayload": float64(maxClientFrame)}, hs)
	require.Equal(t, `40{"sid":"s1"}`, ConnectFrame("s1"))
	require.Equal(t, `44{"message":"Invalid token"}`, ConnectErrorFrame("Invalid token"))
	require.Equal(t, `42["unseen_count_changed",{"unseenCount":4}]`,
		EventFrame(Event{Name: EventUnseenCountChanged, Data: json.RawMessage(`{"unseenCount":4}`)}))
	require.Equal(t, "2", PingFrame)
	require.Equal(t, "3", PongFrame)
}

func TestHubPublish(t *testing.T) {
	t.Parallel()
	h := NewHub()
	a1, a2 := h.Subscribe("e", "a"), h.Subscribe("e", "a")
	b := h.Subscribe("e", "b")
	other := h.Subscribe("f", "a")
	require.Equal(t, 4, h.Sockets())
	e := Event{Name: "x", Data: json.RawMessage(`1`)}
	h.Publish("e", "a", e)
	require.Equal(t, e, <-a1.Events())
	require.Equal(t, e, <-a2.Events())
	require.Empty(t, b.Events())
	require.Empty(t, other.Events())
	require.True(t, h.Connected("e", "a"))
	h.Unsubscribe(a1)
	h.Unsubscribe(a2)
	require.False(t, h.Connected("e", "a"))
	<-a1.Gone()

	// A socket that falls clientBuffer events behind is dropped.
	for range clientBuffer + 1 {
		h.Publish("e", "b", e)
	}
	<-b.Gone()
	require.False(t, h.Connected("e", "b"))
}
