package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"regexp"
	"strconv"

	"github.com/herald-notify/herald/internal/store"
)

// maxTopicMembers bounds the subscribers of one subscriptions request.
const maxTopicMembers = 100

var topicKeyRE = regexp.MustCompile(`^[a-zA-Z0-9_:-]{1,100}$`)

const topicKeyRule = "must be 1 to 100 characters of letters, digits, _ : - (or an e-mail address)"

// validTopicKey: the characters the established service allows, or an e-mail address.
func validTopicKey(k string) bool {
	if topicKeyRE.MatchString(k) {
		return true
	}
	if len(k) == 0 || len(k) > 100 {
		return false
	}
	a, err := mail.ParseAddress(k)
	return err == nil && a.Address == k
}

func pathTopicKey(r *http.Request) (string, error) {
	k := r.PathValue("topicKey")
	if !validTopicKey(k) {
		return "", invalid("topicKey", topicKeyRule, k)
	}
	return k, nil
}

func topicNotFound(err error, key string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Topic "+strconv.Quote(key)+" was not found")
	}
	return err
}

type topicJSON struct {
	ID        string  `json:"_id"`
	Key       string  `json:"key"`
	Name      *string `json:"name,omitempty"`
	CreatedAt string  `json:"createdAt"`
	UpdatedAt string  `json:"updatedAt"`
}

func topicOut(t store.Topic) topicJSON {
	return topicJSON{ID: t.ID, Key: t.Key, Name: t.Name, CreatedAt: formatTime(t.CreatedAt), UpdatedAt: formatTime(t.UpdatedAt)}
}

// topicCreate serves POST /v2/topics: an upsert by key, 201 either way;
// ?failIfExists=true makes an existing key a 409.
func (s *Server) topicCreate(w http.ResponseWriter, r *http.Request) error {
	failIfExists, err := queryBool(r, "failIfExists")
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	key := o.requiredText("key", maxString)
	if key != "" && !validTopicKey(key) {
		o.fail("key", topicKeyRule, o.raw["key"])
	}
	name := o.indexed("name")
	data, dataSet := o.jsonObject("data", maxDataBytes)
	if err := o.errs.err(); err != nil {
		return err
	}
	t, _, err := s.store.TopicUpsert(r.Context(), &store.TopicUpsertParams{Scope: callerFrom(r.Context()).Scope, Key: key,
		Name: name, DataSet: dataSet, Data: store.JSON(data), FailIfExists: failIfExists != nil && *failIfExists, Now: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Topic "+strconv.Quote(key)+" already exists")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, topicOut(t))
	return nil
}

func (s *Server) topicGet(w http.ResponseWriter, r *http.Request) error {
	key, err := pathTopicKey(r)
	if err != nil {
		return err
	}
	t, err := s.store.TopicGet(r.Context(), callerFrom(r.Context()).Scope, key)
	if err != nil {
		return topicNotFound(err, key)
	}
	s.writeJSON(w, http.StatusOK, topicOut(t))
	return nil
}

func (s *Server) topicPatch(w http.ResponseWriter, r *http.Request) error {
	key, err := pathTopicKey(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	name := o.indexed("name")
	data, dataSet := o.jsonObject("data", maxDataBytes)
	if err := o.errs.err(); err != nil {
		return err
	}
	t, _, err := s.store.TopicUpsert(r.Context(), &store.TopicUpsertParams{Scope: callerFrom(r.Context()).Scope, Key: key,
		Name: name, DataSet: dataSet, Data: store.JSON(data), UpdateOnly: true, Now: s.now()})
	if err != nil {
		return topicNotFound(err, key)
	}
	s.writeJSON(w, http.StatusOK, topicOut(t))
	return nil
}

func (s *Server) topicDelete(w http.ResponseWriter, r *http.Request) error {
	key, err := pathTopicKey(r)
	if err != nil {
		return err
	}
	if err := s.store.TopicDelete(r.Context(), callerFrom(r.Context()).Scope, key); err != nil {
		return topicNotFound(err, key)
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true})
	return nil
}

// readMembers reads `subscriptions` (subscriberIds or {identifier, subscriberId})
// or the deprecated `subscriberIds`.
func readMembers(r *http.Request) ([]store.TopicMember, error) {
	o, err := readObject(r)
	if err != nil {
		return nil, err
	}
	var out []store.TopicMember
	if raw, ok := o.raw["subscriptions"]; ok && !isNull(raw) {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			o.fail("subscriptions", "must be an array of subscriberIds or {identifier, subscriberId}", raw)
		}
		for i, it := range items {
			name := "subscriptions." + strconv.Itoa(i)
			var sid string
			if !isNull(it) && json.Unmarshal(it, &sid) == nil {
				out = append(out, store.TopicMember{SubscriberID: sid})
				continue
			}
			so, err := parseObject(it)
			if err != nil {
				o.fail(name, "must be a subscriberId or {identifier, subscriberId}", it)
				continue
			}
			so.prefix, so.errs = name+".", o.errs
			m := store.TopicMember{SubscriberID: so.requiredText("subscriberId", maxSubscriberID)}
			if f := so.indexed("identifier"); f.Value != nil { // part of a unique index: bounded in bytes
				m.Identifier = *f.Value
			}
			out = append(out, m)
		}
	} else {
		ids, _ := o.strings("subscriberIds", maxTopicMembers, maxSubscriberID)
		for _, sid := range ids {
			out = append(out, store.TopicMember{SubscriberID: sid})
		}
		if !o.has("subscriberIds") {
			o.fail("subscriptions", "is required", nil)
		}
	}
	if len(out) > maxTopicMembers {
		o.errs.add("subscriptions", "must have at most "+strconv.Itoa(maxTopicMembers)+" items", len(out))
	}
	for i, m := range out {
		if !validSubscriberID(m.SubscriberID) {
			o.errs.add("subscriptions."+strconv.Itoa(i), subscriberIDRule, m.SubscriberID)
		}
	}
	if len(out) == 0 && o.errs.err() == nil {
		o.fail("subscriptions", "must name at least one subscriber", o.raw["subscriptions"])
	}
	return out, o.errs.err()
}

type subscriptionJSON struct {
	ID         string               `json:"_id"`
	Identifier string               `json:"identifier"`
	Topic      topicRefJSON         `json:"topic"`
	Subscriber *subscriptionSubJSON `json:"subscriber"`
	CreatedAt  string               `json:"createdAt"`
	UpdatedAt  string               `json:"updatedAt"`
}

type topicRefJSON struct {
	ID   string  `json:"_id"`
	Key  string  `json:"key"`
	Name *string `json:"name,omitempty"`
}

type subscriptionSubJSON struct {
	ID           string  `json:"_id"`
	SubscriberID string  `json:"subscriberId"`
	Avatar       *string `json:"avatar"`
	FirstName    *string `json:"firstName"`
	LastName     *string `json:"lastName"`
	Email        *string `json:"email"`
}

type memberErrorJSON struct {
	SubscriberID string `json:"subscriberId"`
	Code         string `json:"code"`
	Message      string `json:"message"`
}

// subscriptionsOut renders subscriptions, each with its topic and subscriber.
func subscriptionsOut(subs []store.TopicSubscription) []subscriptionJSON {
	data := make([]subscriptionJSON, 0, len(subs))
	for _, sub := range subs {
		s := sub.Subscriber
		data = append(data, subscriptionJSON{ID: sub.ID, Identifier: shownIdentifier(sub),
			Topic:      topicRefJSON{ID: sub.Topic.ID, Key: sub.Topic.Key, Name: sub.Topic.Name},
			Subscriber: &subscriptionSubJSON{ID: s.ID, SubscriberID: s.SubscriberID, Avatar: s.Avatar, FirstName: s.FirstName, LastName: s.LastName, Email: s.Email},
			CreatedAt:  formatTime(sub.CreatedAt), UpdatedAt: formatTime(sub.UpdatedAt)})
	}
	return data
}

// topicChangeOut is the answer to adding or removing members: 400 when
// every member failed, else ok.
func topicChangeOut(ch store.TopicChange) (map[string]any, bool) {
	data := subscriptionsOut(ch.Subscriptions)
	var errs []memberErrorJSON
	for _, sid := range ch.Unknown {
		errs = append(errs, memberErrorJSON{SubscriberID: sid, Code: "SUBSCRIBER_NOT_FOUND", Message: "Subscriber " + strconv.Quote(sid) + " was not found"})
	}
	for _, sid := range ch.NotMembers {
		errs = append(errs, memberErrorJSON{SubscriberID: sid, Code: "SUBSCRIPTION_NOT_FOUND", Message: "Subscriber " + strconv.Quote(sid) + " is not subscribed to the topic"})
	}
	out := map[string]any{"data": data, "meta": map[string]int{"totalCount": len(data) + len(errs), "successful": len(data), "failed": len(errs)}}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return out, len(data) > 0 || len(errs) == 0
}

// topicSubscribe serves POST /v2/topics/{topicKey}/subscriptions (creates the topic when missing).
func (s *Server) topicSubscribe(w http.ResponseWriter, r *http.Request) error {
	key, err := pathTopicKey(r)
	if err != nil {
		return err
	}
	members, err := readMembers(r)
	if err != nil {
		return err
	}
	plainMembers(key, members)
	ch, err := s.store.TopicSubscribe(r.Context(), &store.TopicSubscribeParams{Scope: callerFrom(r.Context()).Scope, Key: key,
		Members: members, Now: s.now()})
	if err != nil {
		return err
	}
	s.writeTopicChange(w, r, ch, http.StatusCreated)
	return nil
}

// writeTopicChange answers a subscriptions change: when every subscriber
// failed, a 400 carrying both the error shape and the result.
func (s *Server) writeTopicChange(w http.ResponseWriter, r *http.Request, ch store.TopicChange, okStatus int) {
	out, ok := topicChangeOut(ch)
	if !ok {
		out["statusCode"], out["timestamp"], out["path"] = http.StatusBadRequest, formatTime(s.now()), r.URL.Path
		out["message"], out["error"] = "No subscriber of the request could be changed", http.StatusText(http.StatusBadRequest)
		s.writeJSON(w, http.StatusBadRequest, out)
		return
	}
	s.writeJSON(w, okStatus, out)
}

// topicUnsubscribe serves DELETE /v2/topics/{topicKey}/subscriptions.
func (s *Server) topicUnsubscribe(w http.ResponseWriter, r *http.Request) error {
	key, err := pathTopicKey(r)
	if err != nil {
		return err
	}
	members, err := readMembers(r)
	if err != nil {
		return err
	}
	plainMembers(key, members)
	ch, err := s.store.TopicUnsubscribe(r.Context(), &store.TopicUnsubscribeParams{Scope: callerFrom(r.Context()).Scope, Key: key,
		Members: members})
	if err != nil {
		return topicNotFound(err, key)
	}
	s.writeTopicChange(w, r, ch, http.StatusOK)
	return nil
}

// topicMembership serves GET /v1/topics/{topicKey}/subscribers/{subscriberId}.
func (s *Server) topicMembership(w http.ResponseWriter, r *http.Request) error {
	key, err := pathTopicKey(r)
	if err != nil {
		return err
	}
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	c := callerFrom(r.Context())
	sub, err := s.store.TopicMembership(r.Context(), &store.TopicMembershipParams{Scope: c.Scope, Key: key, SubscriberID: sid})
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Subscriber "+strconv.Quote(sid)+" is not a member of topic "+strconv.Quote(key))
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"_organizationId": c.OrganizationID, "_environmentId": c.EnvironmentID,
		"_subscriberId": sub.Subscriber.ID, "_topicId": sub.Topic.ID, "topicKey": sub.Topic.Key, "externalSubscriberId": sid})
	return nil
}
