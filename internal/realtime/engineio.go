// Package realtime pushes inbox events to the Novu Inbox clients: one hub
// per process holds the open sockets by (environment, subscriber); a
// dispatcher turns the store's after-commit inbox changes into events
// (a new message, the unread and unseen counts) and hands them to the hub;
// the sockets speak socket.io over Engine.IO v4 on a websocket, or plain
// Server-Sent Events.
package realtime

import (
	"encoding/json"
	"errors"
	"strings"
)

// Engine.IO v4 packet types (the first character of a frame).
const (
	eioOpen    = '0'
	eioClose   = '1'
	eioPing    = '2'
	eioPong    = '3'
	eioMessage = '4'
)

// socket.io packet types (the character after an Engine.IO message's).
const (
	sioConnect      = '0'
	sioDisconnect   = '1'
	sioEvent        = '2'
	sioConnectError = '4'
)

// Packet is a frame a client sent, decoded.
type Packet struct {
	// Engine is the Engine.IO type: '0' open … '4' message.
	Engine byte
	// Socket is the socket.io type of a message ('0' connect, '1'
	// disconnect, '2' event …); 0 for other frames.
	Socket byte
	// Namespace is the socket.io namespace ("/" when absent).
	Namespace string
	// Data is the rest: the connect's auth object, an event's array.
	Data string
}

// ErrBadPacket is a frame that is not an Engine.IO v4 packet.
var ErrBadPacket = errors.New("realtime: not an Engine.IO packet")

// ParsePacket decodes one text frame.
func ParsePacket(frame string) (Packet, error) {
	if frame == "" {
		return Packet{}, ErrBadPacket
	}
	p := Packet{Engine: frame[0], Namespace: "/"}
	switch p.Engine {
	case eioOpen, eioClose, eioPing, eioPong, '5', '6':
		p.Data = frame[1:]
		return p, nil
	case eioMessage:
	default:
		return Packet{}, ErrBadPacket
	}
	rest := frame[1:]
	if rest == "" || rest[0] < '0' || rest[0] > '6' {
		return Packet{}, ErrBadPacket
	}
	p.Socket, rest = rest[0], rest[1:]
	if strings.HasPrefix(rest, "/") {
		ns, after, found := strings.Cut(rest, ",")
		if !found {
			ns, after = rest, ""
		}
		p.Namespace, rest = ns, after
	}
	// An ack id (digits) may precede an event's data.
	for rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		rest = rest[1:]
	}
	p.Data = rest
	return p, nil
}

// handshake is the Engine.IO open packet's body.
type handshake struct {
	SID          string   `json:"sid"`
	Upgrades     []string `json:"upgrades"`
	PingInterval int      `json:"pingInterval"`
	PingTimeout  int      `json:"pingTimeout"`
	MaxPayload   int      `json:"maxPayload"`
}

// OpenFrame is the Engine.IO open packet, the first frame of a connection.
func OpenFrame(sid string, pingIntervalMS, pingTimeoutMS int) string {
	b, _ := json.Marshal(handshake{SID: sid, Upgrades: []string{}, PingInterval: pingIntervalMS,
		PingTimeout: pingTimeoutMS, MaxPayload: maxClientFrame})
	return string(eioOpen) + string(b)
}

// ConnectFrame accepts a socket.io connection to the main namespace.
func ConnectFrame(sid string) string {
	b, _ := json.Marshal(map[string]string{"sid": sid})
	return string(eioMessage) + string(sioConnect) + string(b)
}

// ConnectErrorFrame refuses a socket.io connection.
func ConnectErrorFrame(message string) string {
	b, _ := json.Marshal(map[string]string{"message": message})
	return string(eioMessage) + string(sioConnectError) + string(b)
}

// EventFrame is a socket.io event: 42["name",data].
func EventFrame(e Event) string {
	name, _ := json.Marshal(e.Name)
	return string(eioMessage) + string(sioEvent) + "[" + string(name) + "," + string(e.Data) + "]"
}

// Ping and pong frames.
const (
	PingFrame = string(eioPing)
	PongFrame = string(eioPong)
)
