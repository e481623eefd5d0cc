package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// POST /v1/inbox/session: the inbox clients (@novu/js, <Inbox/>) open a
// session for one subscriber of the environment named by its public
// application identifier, proving the subscriber with subscriberHash (the
// HMAC-SHA256 of the subscriberId keyed by one of the environment's API
// keys). The answer's token is the Bearer token of the /v1/inbox/* routes.
// Like every inbox route, the answer is enveloped in {"data": …}: the
// clients unwrap it unconditionally.

// maxSnoozeDurationHours is how far ahead an inbox notification may be
// snoozed (90 days), announced by the session.
const maxSnoozeDurationHours = 90 * 24

// maxApplicationIdentifier bounds the identifier a client may send.
const maxApplicationIdentifier = 256

type unreadCountJSON struct {
	Total    int          `json:"total"`
	Severity severityJSON `json:"severity"`
}

// severityJSON counts by severity, in the protocol's order.
type severityJSON struct {
	High   int `json:"high"`
	Medium int `json:"medium"`
	Low    int `json:"low"`
	None   int `json:"none"`
}

type inboxSessionJSON struct {
	Token                  string          `json:"token"`
	TotalUnreadCount       int             `json:"totalUnreadCount"`
	UnreadCount            unreadCountJSON `json:"unreadCount"`
	RemoveNovuBranding     bool            `json:"removeNovuBranding"`
	IsDevelopmentMode      bool            `json:"isDevelopmentMode"`
	MaxSnoozeDurationHours int             `json:"maxSnoozeDurationHours"`
}

func (s *Server) inboxSessionCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	identifier := o.requiredText("applicationIdentifier", maxApplicationIdentifier)
	hash := o.text("subscriberHash", 128)
	contextKeys := sessionContextKeys(o)
	p := readSessionSubscriber(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	var env store.Environment
	err = s.limitAuth(w, r, func() error {
		env, err = s.inboxSessionCheck(r.Context(), identifier, p.SubscriberID, hash)
		return err
	})
	if err != nil {
		return err
	}
	p.Scope, p.Now = store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, s.now()
	sub, _, err := s.store.SubscriberUpsert(r.Context(), &p)
	if err != nil {
		return err
	}
	unread, err := s.inboxUnreadCount(r.Context(), p.Scope, sub.ID, contextKeys)
	if err != nil {
		return err
	}
	token, err := s.keys.SignInboxSession(secret.InboxSession{OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
		SubscriberID: sub.ID, ExternalID: sub.SubscriberID, ContextKeys: contextKeys, ExpiresAt: s.now().Add(s.inboxTTL)})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"data": inboxSessionJSON{
		Token: token, TotalUnreadCount: unread.Total, UnreadCount: unread,
		RemoveNovuBranding: true, IsDevelopmentMode: env.Name == "development", MaxSnoozeDurationHours: maxSnoozeDurationHours,
	}})
	return nil
}

// readSessionSubscriber reads the session's subscriber: the object
// `subscriber` (or, from older clients, a bare `subscriberId`), with the
// attributes POST /v2/subscribers takes. A timezone no zone database knows
// is left out rather than refused: the browser sends its own unasked, and
// an odd one must not lock the subscriber out of the inbox.
func readSessionSubscriber(o *object) store.SubscriberUpsertParams {
	so := o.sub("subscriber")
	if so == nil {
		if o.has("subscriber") && !isNull(o.raw["subscriber"]) {
			return store.SubscriberUpsertParams{} // not an object: already reported
		}
		if o.has("subscriberId") {
			return store.SubscriberUpsertParams{SubscriberID: o.requiredText("subscriberId", maxSubscriberID*4)}
		}
		o.errs.add("subscriber", "is required", nil)
		return store.SubscriberUpsertParams{}
	}
	var tz string
	if raw, ok := so.raw["timezone"]; ok && json.Unmarshal(raw, &tz) == nil && !validTimezone(tz) {
		delete(so.raw, "timezone")
	}
	return readSubscriber(so)
}

// inboxSessionCheck finds the environment of an application identifier and
// checks the subscriberHash, unless the environment does not require one.
func (s *Server) inboxSessionCheck(ctx context.Context, identifier, subscriberID, hash string) (store.Environment, error) {
	env, err := s.store.EnvironmentGetByIdentifier(ctx, identifier)
	if errors.Is(err, store.ErrNotFound) {
		ae := errorf(http.StatusBadRequest, "Please provide a valid application identifier")
		ae.authFailure = true // guessing identifiers is guessing credentials
		return env, ae
	}
	if err != nil || env.InboxHMACDisabled {
		return env, err
	}
	if hash == "" {
		return env, errorf(http.StatusUnauthorized, "subscriberHash is required: the hex HMAC-SHA256 of the subscriberId keyed by"+
			" one of the environment's API keys")
	}
	keys, err := s.store.APIKeySigningKeys(ctx, env.ID)
	if err != nil {
		return env, err
	}
	if len(keys) == 0 {
		s.log.WarnContext(ctx, "an inbox session could not be checked: no API key of the environment has an encrypted copy"+
			" (keys created before this version get one at their next API call; `herald keys create` makes one that has it)",
			"environmentId", env.ID)
		return env, errorf(http.StatusUnauthorized, "subscriberHash cannot be checked yet: no API key of this environment can sign it."+
			" A key created before this Herald version signs once it has been used for an API call; a new key signs at once")
	}
	if !secret.SubscriberHashMatches(hash, subscriberID, keys) {
		return env, errorf(http.StatusUnauthorized, "subscriberHash does not match subscriberId "+strconv.Quote(subscriberID))
	}
	return env, nil
}

// inboxUnreadCount is a subscriber's unread in-app messages — not read,
// not archived, not snoozed — in all and by severity: one count of each
// filter over the inbox counters (over the messages for a session with a
// context).
func (s *Server) inboxUnreadCount(ctx context.Context, scope store.Scope, subscriberID string, contextKeys *string) (unreadCountJSON, error) {
	filters := store.UnreadFilters()
	for i := range filters {
		filters[i].ContextKeys = contextKeys // a session's context narrows its counts too
	}
	n, err := s.store.InboxCount(ctx, &store.InboxCountParams{Scope: scope, SubscriberID: subscriberID,
		Filters: filters, Now: s.now()})
	if err != nil {
		return unreadCountJSON{}, err
	}
	// n[1:] follows store.Severities: none, low, medium, high.
	return unreadCountJSON{Total: n[0], Severity: severityJSON{None: n[1], Low: n[2], Medium: n[3], High: n[4]}}, nil
}
