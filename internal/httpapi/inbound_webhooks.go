package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/internal/deliveryevents"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/store"
)

// The inbound delivery-event route (issue 29, part A): providers post what
// became of their deliveries. It takes no API key — the provider's
// signature authenticates a post — so it does bounded work for anyone: one
// look-up of the integration by primary key, the signature, at most
// deliveryevents.MaxEvents events parsed from at most maxBody bytes, and
// one transaction queueing them; the recorder records them after the answer.
// Amazon SES's posts come through SNS and need more: SNS's signing
// certificate, fetched once per URL from SNS's host (deliveryevents.SNS),
// and a GET of SNS's SubscribeURL to confirm a subscription.

// inboundAnswer is the answer to an accepted post (not part of the contract).
type inboundAnswer struct {
	// Received counts the post's events, Queued those stored to be recorded,
	// Duplicates those posted before, Ignored those of other types.
	Received   int `json:"received"`
	Queued     int `json:"queued"`
	Duplicates int `json:"duplicates"`
	Ignored    int `json:"ignored"`
}

// errNoInbound is the 404 of every integration that takes no events here,
// whatever the reason: a caller learns nothing more of the integrations.
var errNoInbound = errorf(http.StatusNotFound,
	"The environment has no such integration, or it does not take delivery events (configurations.inboundWebhookEnabled)")

// inboundDeliveryEvents is POST /v2/inbound-webhooks/delivery-providers/{environmentId}/{integrationId}.
func (s *Server) inboundDeliveryEvents(w http.ResponseWriter, r *http.Request) error {
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	req := &deliveryevents.Request{Header: r.Header, Body: body, URL: signedURL(r), Now: s.now(), Context: r.Context(), SNS: s.sns}
	var in store.Integration
	err := s.limitAuth(w, r, func() error {
		var err error
		if in, err = s.inboundIntegration(r, r.PathValue("environmentId"), r.PathValue("integrationId")); err != nil {
			return err
		}
		if err := deliveryevents.Authenticate(in.ProviderID, req, inboundSecrets(in)); err != nil {
			if errors.Is(err, deliveryevents.ErrUnavailable) {
				// SNS's certificate could not be fetched: a 5xx, so that SNS posts again.
				s.log.WarnContext(r.Context(), "delivery events: the provider's signing certificate could not be fetched", "err", err)
				s.metrics.DeliveryPost(in.ProviderID, metrics.PostUnavailable)
				return errorf(http.StatusServiceUnavailable, "The provider's signing certificate could not be fetched; try again")
			}
			s.metrics.DeliveryPost(in.ProviderID, metrics.PostUnauthorized)
			return errorf(http.StatusUnauthorized, "The request is not signed as the integration's provider signs its events")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if s.limiter != nil {
		if err := s.limiter.allow(w, in.EnvironmentID); err != nil {
			s.metrics.DeliveryPost(in.ProviderID, metrics.PostRateLimited)
			return err
		}
	}
	batch, err := deliveryevents.Parse(in.ProviderID, req)
	if err != nil {
		s.metrics.DeliveryPost(in.ProviderID, metrics.PostMalformed)
		return errorf(http.StatusBadRequest, err.Error())
	}
	if batch.Confirm != "" {
		// An SNS subscription (SES) is confirmed before the answer; failing,
		// the 5xx has SNS post the confirmation again.
		if err := s.sns.Confirm(r.Context(), batch.Confirm); err != nil {
			s.log.WarnContext(r.Context(), "delivery events: confirming the SNS subscription", "err", err)
			s.metrics.DeliveryPost(in.ProviderID, metrics.PostUnavailable)
			return errorf(http.StatusServiceUnavailable, "The subscription could not be confirmed; try again")
		}
	}
	for i := range batch.Events {
		batch.Events[i].IntegrationID, batch.Events[i].ProviderID = in.ID, in.ProviderID
	}
	queued, err := s.store.DeliveryEventsAdd(r.Context(), &store.DeliveryEventsAddParams{
		Scope: store.Scope{OrganizationID: in.OrganizationID, EnvironmentID: in.EnvironmentID}, Events: batch.Events, Now: req.Now})
	if err != nil {
		return err
	}
	if queued > 0 {
		s.deliveryEvents.Kick()
	}
	s.metrics.DeliveryPost(in.ProviderID, metrics.PostAccepted)
	s.metrics.DeliveryEvents(in.ProviderID, metrics.EventQueued, queued)
	s.metrics.DeliveryEvents(in.ProviderID, metrics.EventDuplicate, len(batch.Events)-queued)
	s.metrics.DeliveryEvents(in.ProviderID, metrics.EventIgnored, batch.Ignored)
	s.writeJSON(w, http.StatusOK, inboundAnswer{Received: len(batch.Events) + batch.Ignored, Queued: queued,
		Duplicates: len(batch.Events) - queued, Ignored: batch.Ignored})
	return nil
}

// inboundIntegration is the integration a post names, when it takes
// delivery events: of the environment, not deleted, of a provider whose
// events Herald reads, with configurations.inboundWebhookEnabled true.
func (s *Server) inboundIntegration(r *http.Request, environmentID, integrationID string) (store.Integration, error) {
	if !id.Valid(environmentID) || !id.Valid(integrationID) {
		s.metrics.DeliveryPost("", metrics.PostNotFound)
		return store.Integration{}, errNoInbound
	}
	in, err := s.store.IntegrationGet(r.Context(), store.Scope{EnvironmentID: environmentID}, integrationID)
	if errors.Is(err, store.ErrNotFound) {
		s.metrics.DeliveryPost("", metrics.PostNotFound)
		return in, errNoInbound
	}
	if err != nil {
		return in, err
	}
	var conf struct {
		Enabled any `json:"inboundWebhookEnabled"`
	}
	_ = json.Unmarshal(in.Configurations, &conf)
	if enabled, _ := conf.Enabled.(bool); !enabled || !deliveryevents.Supported(in.ProviderID) {
		s.metrics.DeliveryPost(in.ProviderID, metrics.PostNotFound)
		return in, errNoInbound
	}
	return in, nil
}

// inboundSecrets are what authenticates the integration's posts: its
// signing key, and Twilio's auth token (credentials.token).
func inboundSecrets(in store.Integration) deliveryevents.Secrets {
	var conf struct {
		Key any `json:"inboundWebhookSigningKey"`
	}
	var creds struct {
		Token any `json:"token"`
	}
	_ = json.Unmarshal(in.Configurations, &conf)
	_ = json.Unmarshal(in.Credentials, &creds)
	key, _ := conf.Key.(string)
	token, _ := creds.Token.(string)
	return deliveryevents.Secrets{Key: key, Token: token}
}

// signedURL is the URL a provider signs (Twilio): https over TLS or when a
// proxy says so in X-Forwarded-Proto, else http; the Host header; the path
// and query exactly as received.
func signedURL(r *http.Request) string {
	scheme := "http"
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	if r.TLS != nil || strings.EqualFold(strings.TrimSpace(proto), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.RequestURI
}
