package nodetest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// WebhookReceiverDir is the Node project of a receiver of Herald's outbound
// webhooks that verifies them with the standardwebhooks package
// (clients/webhook-receiver), relative to the module's root.
const WebhookReceiverDir = "clients/webhook-receiver"

// WebhookReceiver is a running clients/webhook-receiver.
type WebhookReceiver struct {
	// URL is where it takes webhooks (any path but /_control).
	URL string
	t   testing.TB
}

// Received is one request the receiver got.
type Received struct {
	Path        string `json:"path"`
	ID          string `json:"id"`
	Timestamp   string `json:"timestamp"`
	Type        string `json:"type"`
	Verified    bool   `json:"verified"`
	SecretIndex int    `json:"secretIndex"`
	Error       string `json:"error"`
	Body        any    `json:"body"`
}

// StartWebhookReceiver runs the receiver of WebhookReceiverDir on a free
// loopback port — npm ci first; it stops with the test. Without node and
// npm the test is skipped, except under CI=true, where it fails.
func StartWebhookReceiver(t testing.TB) *WebhookReceiver {
	t.Helper()
	port := startNodeServer(t, WebhookReceiverDir, "receiver.mjs", "the webhook receiver")
	return &WebhookReceiver{URL: "http://127.0.0.1:" + strconv.Itoa(port), t: t}
}

// Configure sets the secrets the receiver verifies with and the statuses
// of its next answers (200 after them).
func (w *WebhookReceiver) Configure(secrets []string, statuses ...int) {
	w.t.Helper()
	if statuses == nil {
		statuses = []int{}
	}
	body, _ := json.Marshal(map[string]any{"secrets": secrets, "statuses": statuses})
	res, err := http.Post(w.URL+"/_control", "application/json", bytes.NewReader(body))
	if err != nil {
		w.t.Fatalf("configuring the webhook receiver: %v", err)
	}
	res.Body.Close()
}

// Received lists what arrived, in order.
func (w *WebhookReceiver) Received() []Received {
	w.t.Helper()
	res, err := http.Get(w.URL + "/_control")
	if err != nil {
		w.t.Fatalf("reading the webhook receiver: %v", err)
	}
	defer res.Body.Close()
	var out []Received
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		w.t.Fatalf("reading the webhook receiver: %v", err)
	}
	return out
}
