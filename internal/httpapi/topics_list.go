package httpapi

import (
	"net/http"
	"strconv"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// maxTopicPage is the largest page of the topic listings.
const maxTopicPage = 100

// readTopicPage reads limit, after, before and orderDirection.
func readTopicPage(r *http.Request, errs fieldErrors) store.TopicPage {
	q := r.URL.Query()
	p := store.TopicPage{Limit: 10, Descending: true}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTopicPage {
			errs.add("limit", "must be an integer from 1 to "+strconv.Itoa(maxTopicPage), v)
		}
		p.Limit = n
	}
	for _, c := range []struct {
		name string
		dst  *string
	}{{"after", &p.After}, {"before", &p.Before}} {
		if v := q.Get(c.name); v != "" {
			if !id.Valid(v) {
				errs.add(c.name, "is not a valid cursor", v)
			}
			*c.dst = v
		}
	}
	if p.After != "" && p.Before != "" {
		errs.add("before", "cannot be combined with after", p.Before)
	}
	switch v := q.Get("orderDirection"); v {
	case "", "DESC":
	case "ASC":
		p.Descending = false
	default:
		errs.add("orderDirection", "must be ASC or DESC", v)
	}
	return p
}

// cursors are a page's next and previous cursors: the last and first ids.
func cursors(p store.TopicPage, more bool, first, last string) (next, previous *string) {
	if first == "" {
		return nil, nil
	}
	if (p.Before == "" && more) || p.Before != "" {
		next = &last
	}
	if p.After != "" || (p.Before != "" && more) {
		previous = &first
	}
	return next, previous
}

// topicList serves GET /v2/topics.
func (s *Server) topicList(w http.ResponseWriter, r *http.Request) error {
	errs := fieldErrors{}
	p := store.TopicListParams{Scope: callerFrom(r.Context()).Scope, TopicPage: readTopicPage(r, errs)}
	q := r.URL.Query()
	p.Key, p.Name = q.Get("key"), q.Get("name")
	for _, f := range []struct{ name, v string }{{"key", p.Key}, {"name", p.Name}} {
		if len(f.v) > maxIndexedBytes {
			errs.add(f.name, "must be at most "+strconv.Itoa(maxIndexedBytes)+" bytes", f.v)
		}
	}
	if err := errs.err(); err != nil {
		return err
	}
	topics, more, total, err := s.store.TopicList(r.Context(), &p)
	if err != nil {
		return err
	}
	data := make([]topicJSON, 0, len(topics))
	first, last := "", ""
	for i, t := range topics {
		data = append(data, topicOut(t))
		if i == 0 {
			first = t.ID
		}
		last = t.ID
	}
	next, previous := cursors(p.TopicPage, more, first, last)
	s.writeJSON(w, http.StatusOK, map[string]any{"data": data, "next": next, "previous": previous, "totalCount": total,
		"totalCountCapped": total >= store.TotalCountCap})
	return nil
}

// topicSubscriptionList serves GET /v2/topics/{topicKey}/subscriptions.
func (s *Server) topicSubscriptionList(w http.ResponseWriter, r *http.Request) error {
	key, err := pathTopicKey(r)
	if err != nil {
		return err
	}
	errs := fieldErrors{}
	p := store.TopicSubscriptionListParams{Scope: callerFrom(r.Context()).Scope, TopicPage: readTopicPage(r, errs), Key: key}
	if sid := r.URL.Query().Get("subscriberId"); sid != "" {
		if !validSubscriberID(sid) {
			errs.add("subscriberId", subscriberIDRule, sid)
		}
		p.SubscriberID = sid
	}
	if err := errs.err(); err != nil {
		return err
	}
	subs, more, total, err := s.store.TopicSubscriptionList(r.Context(), &p)
	if err != nil {
		return topicNotFound(err, key)
	}
	s.writeSubscriptionPage(w, p.TopicPage, subs, more, total)
	return nil
}

// writeSubscriptionPage answers one page of subscriptions with its cursors.
func (s *Server) writeSubscriptionPage(w http.ResponseWriter, p store.TopicPage, subs []store.TopicSubscription, more bool, total int) {
	first, last := "", ""
	if len(subs) > 0 {
		first, last = subs[0].ID, subs[len(subs)-1].ID
	}
	next, previous := cursors(p, more, first, last)
	s.writeJSON(w, http.StatusOK, map[string]any{"data": subscriptionsOut(subs), "next": next, "previous": previous,
		"totalCount": total, "totalCountCapped": total >= store.TotalCountCap})
}

// subscriberTopicList serves GET /v2/subscribers/{subscriberId}/subscriptions.
func (s *Server) subscriberTopicList(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	errs := fieldErrors{}
	p := store.SubscriberTopicListParams{Scope: callerFrom(r.Context()).Scope, TopicPage: readTopicPage(r, errs), SubscriberID: sid,
		Key: r.URL.Query().Get("key")}
	if len(p.Key) > maxIndexedBytes {
		errs.add("key", "must be at most "+strconv.Itoa(maxIndexedBytes)+" bytes", p.Key)
	}
	if err := errs.err(); err != nil {
		return err
	}
	subs, more, total, err := s.store.SubscriberTopicList(r.Context(), &p)
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	s.writeSubscriptionPage(w, p.TopicPage, subs, more, total)
	return nil
}
