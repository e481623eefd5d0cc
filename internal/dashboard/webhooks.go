package dashboard

import (
	"net/http"

	"github.com/herald-notify/herald/internal/webhooks"
)

// GET /dashboard/api/webhook-event-types: the event types an endpoint may
// take (internal/webhooks.Types, in the contract's order), for the Webhooks
// page's choices; the endpoints themselves are the public API's routes.
func (d *Dashboard) webhookEventTypes(w http.ResponseWriter, _ *http.Request, _ account) error {
	writeJSON(w, http.StatusOK, map[string]any{"data": webhooks.Types})
	return nil
}
