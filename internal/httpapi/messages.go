package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
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
		if !validMessageChannel(ch) {
			errs.add("channel", messageChannelRule, ch)
		}
		p.Channel = ch
	}
	// Transaction ids are taken whole, repeated or as transactionId[]: one
	// may hold commas or spaces.
	for _, key := range []string{"transactionId", "transactionId[]"} {
		for _, v := range q[key] {
			if v != "" {
				p.TransactionIDs = append(p.TransactionIDs, v)
			}
		}
	}
	if len(p.TransactionIDs) > maxListValues {
		errs.add("transactionId", fmt.Sprintf("must list at most %d values", maxListValues), len(p.TransactionIDs))
	}
	for _, t := range p.TransactionIDs {
		if utf8.RuneCountInString(t) > maxTransactionID {
			errs.add("transactionId", "must list values of at most 256 characters", t)
			break
		}
	}
	sid := q.Get("subscriberId")
	if utf8.RuneCountInString(sid) > maxSubscriberID {
		errs.add("subscriberId", "must be at most 256 characters", sid)
	}
	if err := errs.err(); err != nil {
		return err
	}
	page := map[string]any{"data": []wire.Message{}, "page": p.Page, "pageSize": p.Limit, "hasMore": false, "totalCount": 0}
	if slices.ContainsFunc(q["contextKeys"], func(v string) bool { return v != "" }) {
		// The exact set of context keys of the messages' triggers (a lone
		// empty value filters nothing, as before contexts).
		errs := fieldErrors{}
		p.ContextKeys = readContextKeys("contextKeys", q["contextKeys"], errs)
		if err := errs.err(); err != nil {
			return err
		}
	}
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
	page["data"], page["totalCount"] = wire.MessagesOf(msgs), total
	// The total stops at TotalCountCap: from there on a full page says there may be more.
	page["hasMore"] = len(msgs) == p.Limit && ((p.Page+1)*p.Limit < total || total >= store.TotalCountCap)
	s.writeJSON(w, http.StatusOK, page)
	return nil
}

// messageChannelRule is the 422 message of an unknown message channel.
const messageChannelRule = "must be one of in_app, email, sms, chat, push, tool"

// validMessageChannel accepts the channels of the established service's
// message filters: Herald's five and "tool", which no Herald message has.
func validMessageChannel(ch string) bool { return provider.ValidChannel(ch) || ch == "tool" }

// messageDeleteByTransaction serves DELETE /v1/messages/transaction/{transactionId}:
// every message of the transaction (of one channel, with ?channel=) is
// deleted as DELETE /v1/messages/{messageId} deletes one; 204 without a body.
func (s *Server) messageDeleteByTransaction(w http.ResponseWriter, r *http.Request) error {
	errs := fieldErrors{}
	tx := r.PathValue("transactionId")
	if tx == "" || utf8.RuneCountInString(tx) > maxTransactionID {
		errs.add("transactionId", "must be 1 to 256 characters", tx)
	}
	ch := r.URL.Query().Get("channel")
	if ch != "" && !validMessageChannel(ch) {
		errs.add("channel", messageChannelRule, ch)
	}
	if err := errs.err(); err != nil {
		return err
	}
	now := s.now()
	r = s.watchChange(r, inboxEvents[store.InboxDelete], store.WebhookMessagesChangedParams{TransactionID: tx}, now)
	_, err := s.store.MessageDeleteByTransaction(r.Context(), &store.MessageDeleteByTransactionParams{
		Scope: callerFrom(r.Context()).Scope, TransactionID: tx, Channel: ch, Now: now})
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Invalid transactionId or channel")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
