package e2e

import (
	"path/filepath"
	"testing"
)

// jsClientDir is the Node project that drives the official @novu/js Inbox client.
var jsClientDir = filepath.Join("..", "..", "clients", "novu-js-test")

// TestNovuJSClient runs clients/novu-js-test/run.mjs — the browser Inbox
// client of the established service, @novu/js, in Node — against Herald on
// each store: the client opens its session (new and existing subscribers,
// unread counts, the errors of a wrong or missing subscriberHash and of an
// unknown application identifier) exactly as it does in a page, then lists,
// counts and changes the subscriber's notifications (every single and bulk
// state change) and reads and updates its preferences with the client's own
// methods, checking each result. Every response is validated against
// Herald's OpenAPI document too.
func TestNovuJSClient(t *testing.T) {
	runClient(t, jsClientDir)
}
