package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// maxMessagePage is the largest page of GET /v1/messages.
const maxMessagePage = 1000

// messageList serves GET /v1/messages: every channel's messages, newest
// first, Novu's page shape.
func (s *Server) messageList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	scope := callerFrom(r.Context()).Scope
	p := store.MessageListParams{Scope: scope, Limit: 10}
	errs := fieldErrors{}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000 {
			errs.add("page", "must be an integer of at least 0", v)
		}
		p.Page = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxMessagePage {
			errs.add("limit", fmt.Sprintf("must be an integer from 1 to %d", maxMessagePage), v)
		}
		p.Limit = n
	}
	if ch := q.Get("channel"); ch != "" {
		if !provider.ValidChannel(ch) {
			errs.add("channel", "must be one of in_app, email, sms, chat, push", ch)
		}
		p.Channel = ch
	}
	p.TransactionIDs = listParam(q, "transactionId")
	if len(p.TransactionIDs) > maxListValues {
		errs.add("transactionId", fmt.Sprintf("must list at most %d values", maxListValues), len(p.TransactionIDs))
	}
	for _, t := range p.TransactionIDs {
		if utf8.RuneCountInString(t) > maxTransactionID {
			errs.add("transactionId", "must list values of at most 256 characters", t)
			break
		}
	}
	sid := strings.TrimSpace(q.Get("subscriberId"))
	if utf8.RuneCountInString(sid) > maxSubscriberID {
		errs.add("subscriberId", "must be at most 256 characters", sid)
	}
	if err := errs.err(); err != nil {
		return err
	}
	page := map[string]any{"data": []messageJSON{}, "page": p.Page, "pageSize": p.Limit, "hasMore": false, "totalCount": 0}
	if sid != "" {
		sub, err := s.store.SubscriberGet(r.Context(), scope, sid)
		if errors.Is(err, store.ErrNotFound) {
			s.writeJSON(w, http.StatusOK, page)
			return nil
		}
		if err != nil {
			return err
		}
		p.SubscriberID = sub.ID
	}
	msgs, total, err := s.store.MessageList(r.Context(), &p)
	if err != nil {
		return err
	}
	page["data"], page["totalCount"] = messagesOut(msgs), total
	page["hasMore"] = len(msgs) == p.Limit && (p.Page+1)*p.Limit < total
	s.writeJSON(w, http.StatusOK, page)
	return nil
}
