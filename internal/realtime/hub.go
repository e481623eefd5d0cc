package realtime

import (
	"encoding/json"
	"sync"
)

// Event names, as the inbox clients listen for them.
const (
	EventNotificationReceived = "notification_received"
	EventUnseenCountChanged   = "unseen_count_changed"
	EventUnreadCountChanged   = "unread_count_changed"
)

// Event is one event for a subscriber's sockets, its payload encoded once.
type Event struct {
	Name string
	Data json.RawMessage
}

// clientBuffer is how many events a socket may fall behind by; a socket
// further behind is closed (its client reconnects and refetches).
const clientBuffer = 64

// Client is one open socket of a subscriber.
type Client struct {
	key    key
	events chan Event
	// gone is closed when the hub drops the client (too slow, or Close).
	gone chan struct{}
	once sync.Once
}

// Events delivers the client's events.
func (c *Client) Events() <-chan Event { return c.events }

// Gone is closed when the hub dropped the client.
func (c *Client) Gone() <-chan struct{} { return c.gone }

type key struct{ env, sub string }

// Hub holds the sockets of one process by (environment, subscriber _id).
type Hub struct {
	mu      sync.RWMutex
	clients map[key]map[*Client]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{clients: map[key]map[*Client]struct{}{}} }

// Subscribe registers a socket of a subscriber; Unsubscribe it when done.
func (h *Hub) Subscribe(environmentID, subscriberID string) *Client {
	c := &Client{key: key{environmentID, subscriberID}, events: make(chan Event, clientBuffer), gone: make(chan struct{})}
	h.mu.Lock()
	set := h.clients[c.key]
	if set == nil {
		set = map[*Client]struct{}{}
		h.clients[c.key] = set
	}
	set[c] = struct{}{}
	h.mu.Unlock()
	return c
}

// Unsubscribe removes a socket.
func (h *Hub) Unsubscribe(c *Client) {
	h.mu.Lock()
	if set := h.clients[c.key]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(h.clients, c.key)
		}
	}
	h.mu.Unlock()
	c.once.Do(func() { close(c.gone) })
}

// Connected reports whether the subscriber has a socket here.
func (h *Hub) Connected(environmentID, subscriberID string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.clients[key{environmentID, subscriberID}]) > 0
}

// Sockets is the number of open sockets.
func (h *Hub) Sockets() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	for _, set := range h.clients {
		n += len(set)
	}
	return n
}

// Publish sends events, in order, to every socket of the subscriber and
// to no other; a socket whose buffer is full is dropped.
func (h *Hub) Publish(environmentID, subscriberID string, events ...Event) {
	h.mu.RLock()
	var slow []*Client
	for c := range h.clients[key{environmentID, subscriberID}] {
		for _, e := range events {
			select {
			case c.events <- e:
				continue
			default:
			}
			slow = append(slow, c)
			break
		}
	}
	h.mu.RUnlock()
	for _, c := range slow {
		h.Unsubscribe(c)
	}
}
