package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/webhooks"
)

// Outbound webhook endpoints (/v2/webhooks/endpoints): where the
// environment's events are sent, signed (internal/webhooks).

// previousSecretFor is how long a rotated secret still signs beside the new one.
const previousSecretFor = 24 * time.Hour

// maxDeliveries is how many attempts GET …/deliveries lists.
const maxDeliveries = 100

type webhookEndpointJSON struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	EventTypes  []string `json:"eventTypes"`
	Description string   `json:"description"`
	Disabled    bool     `json:"disabled"`
	Secret      string   `json:"secret"`
	CreatedAt   string   `json:"createdAt"`
	UpdatedAt   string   `json:"updatedAt"`
}

func webhookEndpointOut(e store.WebhookEndpoint, masked bool) webhookEndpointJSON {
	out := webhookEndpointJSON{ID: e.ID, URL: e.URL, EventTypes: e.EventTypes, Description: e.Description, Disabled: e.Disabled,
		Secret: e.Secret, CreatedAt: formatTime(e.CreatedAt), UpdatedAt: formatTime(e.UpdatedAt)}
	if out.EventTypes == nil {
		out.EventTypes = []string{}
	}
	if masked {
		out.Secret = webhooks.MaskedSecret
	}
	return out
}

type webhookAttemptJSON struct {
	ID            string  `json:"id"`
	EventID       string  `json:"eventId"`
	EventType     string  `json:"eventType"`
	Attempt       int     `json:"attempt"`
	StatusCode    *int    `json:"statusCode"`
	Success       bool    `json:"success"`
	Error         string  `json:"error,omitempty"`
	AttemptedAt   *string `json:"attemptedAt"`
	NextAttemptAt *string `json:"nextAttemptAt"`
}

// readWebhookURL reads `url` (required when create): an absolute http(s)
// URL the private-network rule allows.
func (s *Server) readWebhookURL(o *object, create bool) *string {
	raw, ok := o.raw["url"]
	if !ok && !create {
		return nil
	}
	var u string
	if !ok || json.Unmarshal(raw, &u) != nil {
		o.errs.add(o.prefix+"url", "is required and must be an absolute http or https URL", rawValue(raw))
		return nil
	}
	if err := webhooks.CheckURL(u, s.webhooks.AllowPrivateNetworks()); err != nil {
		o.fail("url", err.Error(), raw)
		return nil
	}
	return &u
}

// readWebhookTypes reads `eventTypes`: an array of event types (empty: all).
func readWebhookTypes(o *object) *[]string {
	raw, ok := o.raw["eventTypes"]
	if !ok {
		return nil
	}
	var types []string
	if isNull(raw) || json.Unmarshal(raw, &types) != nil {
		o.fail("eventTypes", "must be an array of event types", raw)
		return nil
	}
	if len(types) > len(webhooks.Types) {
		o.fail("eventTypes", "must have at most "+strconv.Itoa(len(webhooks.Types))+" items", raw)
		return nil
	}
	out := []string{}
	for i, t := range types {
		if !webhooks.ValidType(t) {
			o.fail("eventTypes", "item "+strconv.Itoa(i)+" ("+strconv.Quote(t)+") is not an event type: one of "+
				strings.Join(webhooks.Types, ", "), raw)
			return nil
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return &out
}

// readWebhookDescription reads `description` (null: "").
func readWebhookDescription(o *object) *string {
	if !o.has("description") {
		return nil
	}
	f := o.str("description", webhooks.MaxDescription)
	if o.errs[o.prefix+"description"].Messages != nil {
		return nil
	}
	d := ""
	if f.Value != nil {
		d = *f.Value
	}
	return &d
}

// pathWebhookEndpoint is the {id} of the path: a malformed one is a 422.
func pathWebhookEndpoint(r *http.Request) (string, error) {
	v := r.PathValue("id")
	if !id.Valid(v) {
		return "", invalid("id", "must be a 24-character hex object id", v)
	}
	return v, nil
}

func webhookNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Webhook endpoint not found")
	}
	return err
}

// webhookEndpointCreate serves POST /v2/webhooks/endpoints.
func (s *Server) webhookEndpointCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	u := s.readWebhookURL(o, true)
	types := readWebhookTypes(o)
	desc := readWebhookDescription(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	p := &store.WebhookEndpointCreateParams{Scope: callerFrom(r.Context()).Scope, URL: *u, Secret: webhooks.NewSecret(), Now: s.now()}
	if types != nil {
		p.EventTypes = *types
	}
	if desc != nil {
		p.Description = *desc
	}
	e, err := s.store.WebhookEndpointCreate(r.Context(), p)
	if err != nil {
		return err
	}
	s.webhooks.Changed(p.EnvironmentID)
	secretAnswer(w)
	s.writeJSON(w, http.StatusCreated, webhookEndpointOut(e, false))
	return nil
}

// webhookEndpointList serves GET /v2/webhooks/endpoints: secrets masked.
func (s *Server) webhookEndpointList(w http.ResponseWriter, r *http.Request) error {
	es, err := s.store.WebhookEndpointList(r.Context(), callerFrom(r.Context()).Scope)
	if err != nil {
		return err
	}
	out := make([]webhookEndpointJSON, 0, len(es))
	for _, e := range es {
		out = append(out, webhookEndpointOut(e, true))
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// webhookEndpointGet serves GET /v2/webhooks/endpoints/{id}.
func (s *Server) webhookEndpointGet(w http.ResponseWriter, r *http.Request) error {
	endpointID, err := pathWebhookEndpoint(r)
	if err != nil {
		return err
	}
	e, err := s.store.WebhookEndpointGet(r.Context(), callerFrom(r.Context()).Scope, endpointID)
	if err != nil {
		return webhookNotFound(err)
	}
	secretAnswer(w)
	s.writeJSON(w, http.StatusOK, webhookEndpointOut(e, false))
	return nil
}

// webhookEndpointPatch serves PATCH /v2/webhooks/endpoints/{id}.
func (s *Server) webhookEndpointPatch(w http.ResponseWriter, r *http.Request) error {
	endpointID, err := pathWebhookEndpoint(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	p := &store.WebhookEndpointUpdateParams{Scope: callerFrom(r.Context()).Scope, ID: endpointID, URL: s.readWebhookURL(o, false),
		EventTypes: readWebhookTypes(o), Description: readWebhookDescription(o), Disabled: o.boolean("disabled"), Now: s.now()}
	if err := o.errs.err(); err != nil {
		return err
	}
	e, err := s.store.WebhookEndpointUpdate(r.Context(), p)
	if err != nil {
		return webhookNotFound(err)
	}
	s.webhooks.Changed(p.EnvironmentID)
	secretAnswer(w)
	s.writeJSON(w, http.StatusOK, webhookEndpointOut(e, false))
	return nil
}

// webhookEndpointDelete serves DELETE /v2/webhooks/endpoints/{id}.
func (s *Server) webhookEndpointDelete(w http.ResponseWriter, r *http.Request) error {
	endpointID, err := pathWebhookEndpoint(r)
	if err != nil {
		return err
	}
	scope := callerFrom(r.Context()).Scope
	if err := s.store.WebhookEndpointDelete(r.Context(), scope, endpointID); err != nil {
		return webhookNotFound(err)
	}
	s.webhooks.Changed(scope.EnvironmentID)
	writeNoContent(w)
	return nil
}

// webhookSecretRotate serves POST /v2/webhooks/endpoints/{id}/rotate-secret:
// the old secret still signs, beside the new one, for previousSecretFor.
func (s *Server) webhookSecretRotate(w http.ResponseWriter, r *http.Request) error {
	endpointID, err := pathWebhookEndpoint(r)
	if err != nil {
		return err
	}
	now := s.now()
	e, err := s.store.WebhookSecretRotate(r.Context(), &store.WebhookSecretRotateParams{Scope: callerFrom(r.Context()).Scope,
		ID: endpointID, Secret: webhooks.NewSecret(), PreviousUntil: now.Add(previousSecretFor), Now: now})
	if err != nil {
		return webhookNotFound(err)
	}
	secretAnswer(w)
	s.writeJSON(w, http.StatusOK, webhookEndpointOut(e, false))
	return nil
}

// webhookDeliveries serves GET /v2/webhooks/endpoints/{id}/deliveries: the
// attempts made, newest first.
func (s *Server) webhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	endpointID, err := pathWebhookEndpoint(r)
	if err != nil {
		return err
	}
	as, err := s.store.WebhookAttemptList(r.Context(), callerFrom(r.Context()).Scope, endpointID, maxDeliveries)
	if err != nil {
		return webhookNotFound(err)
	}
	out := make([]webhookAttemptJSON, 0, len(as))
	for _, a := range as {
		out = append(out, webhookAttemptJSON{ID: a.ID, EventID: a.EventID, EventType: a.EventType, Attempt: a.Attempt,
			StatusCode: a.StatusCode, Success: a.Success, Error: a.Error, AttemptedAt: formatTimePtr(a.AttemptedAt),
			NextAttemptAt: formatTimePtr(a.NextAttemptAt)})
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}
