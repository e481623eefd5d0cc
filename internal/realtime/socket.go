package realtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// maxClientFrame bounds a frame a client may send (it sends only short
// control packets).
const maxClientFrame = 1 << 16

// Timing of the Engine.IO heartbeat, as the open packet announces it.
var (
	PingInterval = 25 * time.Second
	PingTimeout  = 20 * time.Second
)

// writeTimeout bounds one frame's write to a client.
const writeTimeout = 10 * time.Second

func newSID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ServeSocket upgrades r to a websocket and speaks socket.io (Engine.IO v4)
// on it for an authenticated subscriber until either side closes: the open
// packet, the connect to namespace "/", pings every PingInterval, and the
// subscriber's events. It returns once the socket is closed.
func (d *Dispatcher) ServeSocket(w http.ResponseWriter, r *http.Request, environmentID, subscriberID string) error {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// The session token authenticates, not cookies: any page's origin may connect.
		InsecureSkipVerify: true,
	})
	if err != nil {
		return nil // Accept answered the client
	}
	conn.SetReadLimit(maxClientFrame)
	defer conn.CloseNow() //nolint:errcheck
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	write := func(frame string) error {
		wctx, wcancel := context.WithTimeout(ctx, writeTimeout)
		defer wcancel()
		return conn.Write(wctx, websocket.MessageText, []byte(frame))
	}
	if err := write(OpenFrame(newSID(), int(PingInterval/time.Millisecond), int(PingTimeout/time.Millisecond))); err != nil {
		return nil
	}
	in := make(chan Packet)
	go func() {
		defer cancel()
		for {
			typ, b, err := conn.Read(ctx)
			if err != nil {
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			p, err := ParsePacket(string(b))
			if err != nil {
				continue
			}
			select {
			case in <- p:
			case <-ctx.Done():
				return
			}
		}
	}()

	ping := time.NewTicker(PingInterval)
	defer ping.Stop()
	// deadline is when the client must have connected, or answered a ping.
	deadline := time.NewTimer(PingInterval + PingTimeout)
	defer deadline.Stop()
	var client *Client
	defer func() {
		if client != nil {
			d.hub.Unsubscribe(client)
		}
	}()
	var events <-chan Event
	var gone <-chan struct{}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.closing:
			conn.Close(websocket.StatusGoingAway, "shutting down") //nolint:errcheck
			return nil
		case <-deadline.C:
			conn.Close(websocket.StatusPolicyViolation, "ping timeout") //nolint:errcheck
			return nil
		case <-ping.C:
			if err := write(PingFrame); err != nil {
				return nil
			}
			deadline.Reset(PingTimeout)
		case <-gone:
			conn.Close(websocket.StatusTryAgainLater, "too slow") //nolint:errcheck
			return nil
		case e := <-events:
			if err := write(EventFrame(e)); err != nil {
				return nil
			}
		case p := <-in:
			switch {
			case p.Engine == eioPong:
				deadline.Reset(PingInterval + PingTimeout)
			case p.Engine == eioPing:
				if err := write(PongFrame + p.Data); err != nil {
					return nil
				}
			case p.Engine == eioClose, p.Engine == eioMessage && p.Socket == sioDisconnect:
				conn.Close(websocket.StatusNormalClosure, "") //nolint:errcheck
				return nil
			case p.Engine == eioMessage && p.Socket == sioConnect:
				if p.Namespace != "/" {
					if err := write(ConnectErrorFrame("Invalid namespace")); err != nil {
						return nil
					}
					continue
				}
				if client == nil {
					client = d.hub.Subscribe(environmentID, subscriberID)
					events, gone = client.Events(), client.Gone()
				}
				if err := write(ConnectFrame(newSID())); err != nil {
					return nil
				}
			}
		}
	}
}

// ErrNotWebSocket is a request to the socket route that is not a websocket upgrade.
var ErrNotWebSocket = errors.New("realtime: not a websocket upgrade")

// IsUpgrade reports whether r asks for a websocket.
func IsUpgrade(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}
