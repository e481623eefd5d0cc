package realtime

import (
	"bufio"
	"net/http"
	"strings"
	"time"
)

// sseKeepAlive is how often an idle event stream gets a comment line.
var sseKeepAlive = 25 * time.Second

// ServeSSE streams a subscriber's events as Server-Sent Events
// (`event: <name>` and `data: <payload>`, the socket's payloads) until
// the client goes away.
func (d *Dispatcher) ServeSSE(w http.ResponseWriter, r *http.Request, environmentID, subscriberID string) error {
	rc := http.NewResponseController(w)
	// The server's read and write timeouts would end the stream.
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	client := d.hub.Subscribe(environmentID, subscriberID)
	defer d.hub.Unsubscribe(client)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	flush := func() error {
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	bw.WriteString(": connected\n\n") //nolint:errcheck
	if err := flush(); err != nil {
		return nil
	}
	tick := time.NewTicker(sseKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-client.Gone():
			return nil
		case <-d.closing:
			return nil
		case <-tick.C:
			bw.WriteString(": ping\n\n") //nolint:errcheck
		case e := <-client.Events():
			bw.WriteString("event: " + e.Name + "\ndata: " + string(e.Data) + "\n\n") //nolint:errcheck
		}
		if err := flush(); err != nil {
			return nil
		}
	}
}

// headerHas reports whether a comma-separated header holds token.
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
