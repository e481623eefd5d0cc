package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/textcheck"
	"github.com/herald-notify/herald/internal/wire"
)

const (
	maxMarkIDs           = 100
	maxPayloadConditions = 20
	maxPayloadDepth      = 8
)

// pathSubscriber resolves the path's subscriberId in the caller's environment.
func (s *Server) pathSubscriber(r *http.Request) (store.Subscriber, error) {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return store.Subscriber{}, err
	}
	sub, err := s.store.SubscriberGet(r.Context(), callerFrom(r.Context()).Scope, sid)
	if err != nil {
		return sub, subscriberNotFound(err, sid)
	}
	return sub, nil
}

// parseFeedQuery reads the feed's query; it is its own function for fuzzing.
func parseFeedQuery(q map[string][]string) (store.FeedParams, error) {
	get := func(name string) (string, bool) {
		v, ok := q[name]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	p := store.FeedParams{Limit: 10}
	errs := fieldErrors{}
	if v, ok := get("page"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000 {
			errs.add("page", "must be an integer of at least 0", v)
		}
		p.Page = n
	}
	if v, ok := get("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			errs.add("limit", "must be an integer from 1 to 100", v)
		}
		p.Limit = n
	}
	for _, f := range []struct {
		name string
		dst  **bool
	}{{"read", &p.Read}, {"seen", &p.Seen}} {
		if v, ok := get(f.name); ok {
			switch v {
			case "true":
				b := true
				*f.dst = &b
			case "false":
				b := false
				*f.dst = &b
			default:
				errs.add(f.name, "must be true or false", v)
			}
		}
	}
	if v, ok := get("payload"); ok && v != "" {
		conds, err := parsePayloadFilter(v)
		if errors.Is(err, errPayloadFilter) {
			// A payload that is not base64 of a JSON object is a 400 (docs/api-behaviour.md, "Inbox").
			return p, errorf(http.StatusBadRequest, "payload "+err.Error())
		}
		if err != nil {
			errs.add("payload", err.Error(), v)
		}
		p.Payload = conds
	}
	return p, errs.err()
}

var (
	// errPayloadFilter: the feed's payload filter is not base64 of a JSON object.
	errPayloadFilter = errors.New("must be base64 (standard or URL alphabet) of a JSON object")
	errPayloadDepth  = errors.New("nests deeper than 8 levels")
)

// parsePayloadFilter decodes base64 (either alphabet, padding optional) of a
// JSON object into one exact-equality condition per leaf.
func parsePayloadFilter(v string) ([]store.PayloadCondition, error) {
	if len(v) > 8192 {
		return nil, errors.New("must be at most 8192 characters")
	}
	s := strings.TrimRight(strings.NewReplacer("-", "+", "_", "/").Replace(v), "=")
	raw, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, errPayloadFilter
	}
	return jsonConditions(raw, errPayloadFilter)
}

// jsonConditions turns a JSON object into one exact-equality condition per
// leaf (an empty object and an array are leaves); errBad is the error of
// text that is not a JSON object.
func jsonConditions(raw []byte, errBad error) ([]store.PayloadCondition, error) {
	// The decoded filter meets the edge's rules for JSON, as a body would.
	problems, err := textcheck.JSON(raw, maxJSONDepth)
	if err != nil {
		return nil, errBad
	}
	if len(problems) > 0 {
		if problems[0].Err == textcheck.ErrDepth {
			return nil, errPayloadDepth
		}
		return nil, errors.New("has a key or value that " + problems[0].Err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return nil, errBad
	}
	var conds []store.PayloadCondition
	var walk func(path []string, v any) error
	walk = func(path []string, v any) error {
		if len(path) > maxPayloadDepth {
			return errPayloadDepth
		}
		if m, ok := v.(map[string]any); ok && len(path) == 0 || ok && len(m) > 0 {
			keys := make([]string, 0, len(m))
			for k := range m {
				if k == "" || strings.ContainsAny(k, `"\`) {
					return errors.New("has a key that is empty or contains a quote or backslash")
				}
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if err := walk(append(append([]string{}, path...), k), m[k]); err != nil {
					return err
				}
			}
			return nil
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return errBad
		}
		conds = append(conds, store.PayloadCondition{Path: path, Value: bytes.TrimSpace(buf.Bytes())})
		if len(conds) > maxPayloadConditions {
			return errors.New("has more than 20 conditions")
		}
		return nil
	}
	if err := walk(nil, obj); err != nil {
		return nil, err
	}
	return conds, nil
}

func (s *Server) feed(w http.ResponseWriter, r *http.Request) error {
	p, err := parseFeedQuery(r.URL.Query())
	if err != nil {
		return err
	}
	sub, err := s.pathSubscriber(r)
	if err != nil {
		return err
	}
	p.Scope, p.SubscriberID, p.Now = callerFrom(r.Context()).Scope, sub.ID, s.now()
	page, err := s.store.MessageFeed(r.Context(), &p)
	if err != nil {
		return err
	}
	data := make([]wire.FeedItem, 0, len(page.Messages))
	for i := range page.Messages {
		data = append(data, wire.FeedItemOf(&page.Messages[i], &sub))
	}
	// pageSize is "the number of notifications returned in this response", as the
	// established API defines it: the items in data (docs/api-behaviour.md, "Inbox").
	s.writeJSON(w, http.StatusOK, map[string]any{
		"data": data, "totalCount": page.TotalCount, "hasMore": page.HasMore, "pageSize": len(data), "page": p.Page,
	})
	return nil
}

func (s *Server) unseenCount(w http.ResponseWriter, r *http.Request) error {
	sub, err := s.pathSubscriber(r)
	if err != nil {
		return err
	}
	n, err := s.store.MessageUnseenCount(r.Context(), &store.MessageUnseenCountParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sub.ID, Now: s.now()})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]int{"count": n})
	return nil
}

// readMessageIDs reads messageId: one id or an array of up to 100.
func readMessageIDs(o *object) []string {
	raw, ok := o.raw["messageId"]
	if !ok || isNull(raw) {
		o.errs.add("messageId", "is required", nil)
		return nil
	}
	var ids []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		ids = []string{one}
	} else if json.Unmarshal(raw, &ids) != nil {
		o.fail("messageId", "must be a message id or an array of them", raw)
		return nil
	}
	if len(ids) == 0 || len(ids) > maxMarkIDs {
		o.fail("messageId", "must name 1 to 100 messages", raw)
		return nil
	}
	for i, v := range ids {
		if !id.Valid(v) {
			name := "messageId"
			if raw[0] == '[' {
				name += "." + strconv.Itoa(i)
			}
			o.errs.add(name, "must be a 24-character hex identifier", v)
		}
	}
	return ids
}

func (s *Server) markAs(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	ids := readMessageIDs(o)
	mark := o.requiredOneOf("markAs", store.MarkRead, store.MarkSeen, store.MarkUnread, store.MarkUnseen)
	if err := o.errs.err(); err != nil {
		return err
	}
	sub, err := s.pathSubscriber(r)
	if err != nil {
		return err
	}
	now := s.now()
	r = s.watchChange(r, markEvents[mark], store.WebhookMessagesChangedParams{SubscriberID: sub.ID, IDs: ids}, now)
	ms, err := s.store.MessageMarkAs(r.Context(), &store.MessageMarkAsParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sub.ID, IDs: ids, MarkAs: mark, Now: now})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, wire.MessagesOf(ms))
	return nil
}

func (s *Server) markAll(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	mark := o.requiredOneOf("markAs", store.MarkRead, store.MarkSeen)
	if err := o.errs.err(); err != nil {
		return err
	}
	sub, err := s.pathSubscriber(r)
	if err != nil {
		return err
	}
	now := s.now()
	r = s.watchChange(r, markEvents[mark], store.WebhookMessagesChangedParams{SubscriberID: sub.ID}, now)
	n, err := s.store.MessageMarkAll(r.Context(), &store.MessageMarkAllParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sub.ID, MarkAs: mark, Now: now})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, n)
	return nil
}

func (s *Server) messageAction(w http.ResponseWriter, r *http.Request) error {
	mid, typ := r.PathValue("messageId"), r.PathValue("type")
	errs := fieldErrors{}
	if !id.Valid(mid) {
		errs.add("messageId", "must be a 24-character hex identifier", mid)
	}
	if typ != "primary" && typ != "secondary" {
		errs.add("type", "must be primary or secondary", typ)
	}
	if err := errs.err(); err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	status := o.requiredOneOf("status", "pending", "done")
	payload, _ := o.jsonObject("payload", maxDataBytes)
	if err := o.errs.err(); err != nil {
		return err
	}
	sub, err := s.pathSubscriber(r)
	if err != nil {
		return err
	}
	result := map[string]any{"type": typ}
	if payload != nil {
		result["payload"] = json.RawMessage(payload)
	}
	action, _ := json.Marshal(map[string]any{"status": status, "result": result})
	m, err := s.store.MessageSetAction(r.Context(), &store.MessageSetActionParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sub.ID, MessageID: mid, Action: action, Now: s.now()})
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Message "+mid+" was not found")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, wire.MessageOf(&m))
	return nil
}

func (s *Server) messageDelete(w http.ResponseWriter, r *http.Request) error {
	mid := r.PathValue("messageId")
	if !id.Valid(mid) {
		return invalid("messageId", "must be a 24-character hex identifier", mid)
	}
	now := s.now()
	r = s.watchChange(r, inboxEvents[store.InboxDelete], store.WebhookMessagesChangedParams{IDs: []string{mid}}, now)
	if err := s.store.MessageDelete(r.Context(), &store.MessageDeleteParams{Scope: callerFrom(r.Context()).Scope,
		MessageID: mid, Now: now}); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusNotFound, "Message "+mid+" was not found")
		}
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true, "status": "deleted"})
	return nil
}
