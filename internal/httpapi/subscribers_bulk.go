package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/herald-notify/herald/internal/store"
)

// maxBulkSubscribers bounds the subscribers of one bulk request.
const maxBulkSubscribers = 500

type subscriberRefJSON struct {
	SubscriberID string `json:"subscriberId"`
}

type bulkFailureJSON struct {
	SubscriberID string `json:"subscriberId,omitempty"`
	Message      string `json:"message,omitempty"`
}

type bulkResultJSON struct {
	Created []subscriberRefJSON `json:"created"`
	Updated []subscriberRefJSON `json:"updated"`
	Failed  []bulkFailureJSON   `json:"failed"`
}

// subscriberBulkCreate serves POST /v1/subscribers/bulk: 1 to 500
// subscribers upserted by subscriberId, all or none. Every item is checked
// as POST /v2/subscribers checks one, and any offending item fails the whole
// request with one 422 naming `subscribers.<i>.<field>` (as the established
// service's validation does), so `failed` is always empty.
func (s *Server) subscriberBulkCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	raw, ok := o.raw["subscribers"]
	var items []json.RawMessage
	switch {
	case !ok || isNull(raw):
		o.errs.add("subscribers", "is required", nil)
	case json.Unmarshal(raw, &items) != nil:
		o.fail("subscribers", "must be an array of subscribers", raw)
	case len(items) == 0 || len(items) > maxBulkSubscribers:
		o.errs.add("subscribers", "must have 1 to "+strconv.Itoa(maxBulkSubscribers)+" items", len(items))
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	p := store.SubscriberBulkUpsertParams{Scope: callerFrom(r.Context()).Scope, Items: make([]store.SubscriberUpsertParams, 0, len(items)),
		Now: s.now()}
	for i, it := range items {
		name := "subscribers." + strconv.Itoa(i)
		var m map[string]json.RawMessage
		if isNull(it) || json.Unmarshal(it, &m) != nil {
			o.fail(name, "must be an object", it)
			continue
		}
		p.Items = append(p.Items, readSubscriber(&object{prefix: name + ".", raw: m, errs: o.errs}))
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	created, err := s.store.SubscriberBulkUpsert(r.Context(), &p)
	if err != nil {
		return err
	}
	out := bulkResultJSON{Created: []subscriberRefJSON{}, Updated: []subscriberRefJSON{}, Failed: []bulkFailureJSON{}}
	for i, it := range p.Items {
		if created[i] {
			out.Created = append(out.Created, subscriberRefJSON{it.SubscriberID})
		} else {
			out.Updated = append(out.Updated, subscriberRefJSON{it.SubscriberID})
		}
	}
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

// subscriberOnlineStatus serves PATCH /v1/subscribers/{subscriberId}/online-status.
func (s *Server) subscriberOnlineStatus(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	online := o.boolean("isOnline")
	if online == nil && o.errs.err() == nil {
		o.errs.add("isOnline", "is required", nil)
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	sub, err := s.store.SubscriberSetOnline(r.Context(), &store.SubscriberOnlineParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sid, Online: *online, Now: s.now()})
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	s.writeJSON(w, http.StatusOK, subscriberOut(sub))
	return nil
}
