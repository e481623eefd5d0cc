package httpapi

import (
	"errors"
	"net/http"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// maxDeviceTokens bounds the device tokens of one subscriber channel.
const maxDeviceTokens = 100

var channelCredentialFields = []string{"webhookUrl", "channel", "deviceTokens", "alertUid", "title", "imageUrl", "state", "externalUrl"}

// readChannelCredentials reads ChannelCredentials; unknown keys are an error,
// since a credential silently dropped would fail only at delivery time.
func readChannelCredentials(o *object) store.ChannelCredentials {
	c := o.sub("credentials")
	if c == nil {
		if !o.has("credentials") || isNull(o.raw["credentials"]) {
			o.errs.add(o.prefix+"credentials", "is required", nil)
		}
		return store.ChannelCredentials{}
	}
	c.onlyKnown(channelCredentialFields...)
	out := store.ChannelCredentials{
		WebhookURL: c.text("webhookUrl", maxString), Channel: c.text("channel", maxString),
		AlertUID: c.text("alertUid", maxString), Title: c.text("title", maxString),
		ImageURL: c.text("imageUrl", maxString), State: c.text("state", maxString),
		ExternalURL: c.text("externalUrl", maxString),
	}
	out.DeviceTokens, _ = c.strings("deviceTokens", maxDeviceTokens, maxString)
	// Duplicates in one request are kept once, in order.
	out.DeviceTokens = dedupe(out.DeviceTokens)
	return out
}

func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (s *Server) credentialsAppend(w http.ResponseWriter, r *http.Request) error {
	return s.credentialsUpdate(w, r, false)
}

func (s *Server) credentialsReplace(w http.ResponseWriter, r *http.Request) error {
	return s.credentialsUpdate(w, r, true)
}

func (s *Server) credentialsUpdate(w http.ResponseWriter, r *http.Request, replace bool) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	providerID := o.requiredText("providerId", maxString)
	if providerID != "" && !provider.SubscriberCredentialProvider(providerID) {
		o.fail("providerId", "must be a chat or push provider", o.raw["providerId"])
	}
	identifier := o.text("integrationIdentifier", maxString)
	creds := readChannelCredentials(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	c := callerFrom(r.Context())
	// The subscriber first, so that an unknown one is a 404 whatever the body names.
	if _, err := s.store.SubscriberGet(r.Context(), c.Scope, sid); err != nil {
		return subscriberNotFound(err, sid)
	}
	in, err := s.store.IntegrationForCredentials(r.Context(), &store.IntegrationForCredentialsParams{Scope: c.Scope,
		ProviderID: providerID, Identifier: identifier})
	if errors.Is(err, store.ErrNotFound) {
		f := fieldErrors{}
		if identifier != "" {
			f.add("integrationIdentifier", "names no active integration of provider "+providerID, identifier)
		} else {
			f.add("providerId", "has no active integration in this environment", providerID)
		}
		return f.err()
	}
	if err != nil {
		return err
	}
	sub, err := s.store.SubscriberChannelUpdate(r.Context(), &store.ChannelUpdate{
		Scope: c.Scope, SubscriberID: sid, Replace: replace, MaxDeviceTokens: maxDeviceTokens,
		Channel: store.ChannelSettings{ProviderID: providerID, IntegrationIdentifier: in.Identifier,
			IntegrationID: in.ID, Credentials: creds},
		Now: s.now(),
	})
	if errors.Is(err, store.ErrTooManyTokens) {
		return invalid("credentials.deviceTokens", "a channel holds at most 100 device tokens", creds.DeviceTokens)
	}
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	s.writeJSON(w, http.StatusOK, subscriberOut(sub))
	return nil
}

func (s *Server) credentialsDelete(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	providerID := r.PathValue("providerId")
	if !provider.SubscriberCredentialProvider(providerID) {
		return invalid("providerId", "must be a chat or push provider", providerID)
	}
	sub, err := s.store.SubscriberChannelDelete(r.Context(), &store.SubscriberChannelDeleteParams{
		Scope: callerFrom(r.Context()).Scope, SubscriberID: sid, ProviderID: providerID, Now: s.now()})
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	s.writeJSON(w, http.StatusOK, subscriberOut(sub))
	return nil
}
