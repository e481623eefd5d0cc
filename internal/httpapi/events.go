package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/logctx"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

const (
	maxRecipients    = 100
	maxBulkEvents    = 100
	maxTransactionID = 256
	maxPayloadBytes  = 256 << 10
)

// fallbackProviders name a job's provider when its channel has no active
// integration (the job then fails at delivery, saying so).
var fallbackProviders = map[string]string{
	"in_app": provider.InAppProvider, "email": "svc-email", "sms": "svc-sms", "chat": "chat-webhook", "push": "push-webhook",
}

type triggerJSON struct {
	Acknowledged  bool   `json:"acknowledged"`
	Status        string `json:"status"`
	TransactionID string `json:"transactionId,omitempty"`
}

// triggerRequest is a parsed trigger body.
type triggerRequest struct {
	name          string
	transactionID string
	recipients    []store.Recipient
	topics        []store.TopicRecipient
	broadcast     bool
	payload       store.JSON
	overrides     store.JSON
	actor         store.JSON
	actorID       string
	contexts      []store.ContextRef
}

// maxTopicExclude bounds a topic recipient's exclude list.
const maxTopicExclude = 1000

// readTrigger parses one event; errors go to o.errs under o's prefix.
func readTrigger(o *object) triggerRequest {
	t := readEvent(o)
	raw, ok := o.raw["to"]
	if !ok || isNull(raw) {
		o.errs.add(o.prefix+"to", "is required", nil)
		return t
	}
	var items []json.RawMessage
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &items); err != nil {
			o.fail("to", "must be a subscriberId, a subscriber or an array of them", raw)
			return t
		}
		if len(items) == 0 || len(items) > maxRecipients {
			o.fail("to", "must name 1 to 100 recipients", raw)
			return t
		}
	} else {
		items = []json.RawMessage{raw}
	}
	for i, it := range items {
		name := "to"
		if raw[0] == '[' {
			name = "to." + strconv.Itoa(i)
		}
		if tr, isTopic := readTopicRecipient(o, name, it); isTopic {
			if tr != nil {
				t.topics = append(t.topics, *tr)
			}
			continue
		}
		if rcp, ok := readRecipient(o, name, it); ok {
			t.recipients = append(t.recipients, rcp)
		}
	}
	return t
}

// readEvent reads what every trigger has besides its recipients: the
// workflow, transactionId, payload, overrides and actor.
func readEvent(o *object) triggerRequest {
	var t triggerRequest
	t.name = o.requiredText("name", maxString)
	t.transactionID = o.text("transactionId", maxTransactionID)
	t.payload, _ = o.jsonObject("payload", maxPayloadBytes)
	t.overrides, _ = o.jsonObject("overrides", maxDataBytes)
	t.contexts = readTriggerContexts(o)
	if a, ok := o.raw["actor"]; ok && !isNull(a) {
		if rcp, ok := readRecipient(o, "actor", a); ok {
			actor := map[string]any{"type": "user", "data": nil, "subscriberId": rcp.SubscriberID}
			if rcp.Upsert != nil && rcp.Upsert.Avatar.Value != nil {
				actor["data"] = *rcp.Upsert.Avatar.Value
			}
			t.actor, _ = json.Marshal(actor)
			t.actorID = rcp.SubscriberID
		}
	}
	return t
}

// readTopicRecipient reads a `{type: "Topic", topicKey, exclude?}`
// recipient; isTopic is false for anything else. A bad one is reported and
// returned nil.
func readTopicRecipient(o *object, name string, raw json.RawMessage) (tr *store.TopicRecipient, isTopic bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	so, err := parseObject(raw)
	if err != nil {
		return nil, false
	}
	var typ string
	if json.Unmarshal(so.raw["type"], &typ) != nil || typ != "Topic" {
		return nil, false
	}
	so.prefix, so.errs = o.prefix+name+".", o.errs
	before := len(o.errs)
	r := store.TopicRecipient{Key: so.requiredText("topicKey", maxString)}
	if r.Key != "" && !validTopicKey(r.Key) {
		so.fail("topicKey", topicKeyRule, so.raw["topicKey"])
	}
	r.Exclude, _ = so.strings("exclude", maxTopicExclude, maxSubscriberID)
	if len(o.errs) != before {
		return nil, true
	}
	return &r, true
}

// readRecipient reads a subscriberId string or a subscriber object.
func readRecipient(o *object, name string, raw json.RawMessage) (store.Recipient, bool) {
	var sid string
	if json.Unmarshal(raw, &sid) == nil {
		if !validSubscriberID(sid) {
			o.fail(name, "must be 1 to 256 characters", raw)
			return store.Recipient{}, false
		}
		return store.Recipient{SubscriberID: sid}, true
	}
	so, err := parseObject(raw)
	if err != nil {
		o.fail(name, "must be a subscriberId or a subscriber object", raw)
		return store.Recipient{}, false
	}
	so.prefix, so.errs = o.prefix+name+".", o.errs
	before := len(o.errs)
	up := &store.SubscriberUpsertParams{SubscriberID: so.requiredText("subscriberId", maxSubscriberID*4)}
	if up.SubscriberID != "" && !validSubscriberID(up.SubscriberID) {
		so.fail("subscriberId", "must be 1 to 256 characters", so.raw["subscriberId"])
	}
	subscriberAttributes(so, up)
	if len(o.errs) != before {
		return store.Recipient{}, false
	}
	return store.Recipient{SubscriberID: up.SubscriberID, Upsert: up}, true
}

// providerCache remembers each environment's primary provider per channel
// for a moment, so that triggers do not query integrations every time.
type providerCache struct {
	mu sync.Mutex
	m  map[string]providerEntry
}

type providerEntry struct {
	at        time.Time
	byChannel map[string]string
}

const providerCacheTTL = 2 * time.Second

func (s *Server) providersFor(r *http.Request, c caller) (map[string]string, error) {
	now := s.now()
	s.channelProviders.mu.Lock()
	e, ok := s.channelProviders.m[c.EnvironmentID]
	s.channelProviders.mu.Unlock()
	if ok && now.Sub(e.at) < providerCacheTTL {
		return e.byChannel, nil
	}
	ins, err := s.store.IntegrationList(r.Context(), &store.IntegrationListParams{
		OrganizationID: c.OrganizationID, EnvironmentID: c.EnvironmentID, ActiveOnly: true})
	if err != nil {
		return nil, err
	}
	byChannel := map[string]string{}
	for _, in := range ins {
		if in.Channel != "" && (in.Primary || byChannel[in.Channel] == "") {
			byChannel[in.Channel] = in.ProviderID
		}
	}
	s.channelProviders.mu.Lock()
	if s.channelProviders.m == nil {
		s.channelProviders.m = map[string]providerEntry{}
	}
	s.channelProviders.m[c.EnvironmentID] = providerEntry{at: now, byChannel: byChannel}
	s.channelProviders.mu.Unlock()
	return byChannel, nil
}

// trigger runs one parsed event.
func (s *Server) trigger(r *http.Request, t triggerRequest) (triggerJSON, error) {
	out, params, err := s.prepareTrigger(r, &t)
	if err != nil || params == nil {
		return out, err
	}
	res, err := s.store.Trigger(r.Context(), params)
	return s.triggered(r, t, params, out, res, err)
}

// prepareTrigger makes a parsed event ready for the store: its workflow, its
// providers, its digests planned. No params means out is the whole answer.
func (s *Server) prepareTrigger(r *http.Request, t *triggerRequest) (triggerJSON, *store.TriggerParams, error) {
	c := callerFrom(r.Context())
	wf, err := s.store.WorkflowGet(r.Context(), c.Scope, t.name)
	if errors.Is(err, store.ErrNotFound) {
		return triggerJSON{}, nil, invalid("name", "names no workflow of this environment", t.name)
	}
	if err != nil {
		return triggerJSON{}, nil, err
	}
	if t.transactionID == "" {
		t.transactionID = id.New()
	}
	if f := logctx.From(r.Context()); f != nil {
		f.TransactionID = t.transactionID // on the request's log lines, the access log's too
	}
	out := triggerJSON{Acknowledged: true, Status: "processed", TransactionID: t.transactionID}
	switch {
	case !wf.Active:
		out.Status = "trigger_not_active"
		return out, nil, nil
	case len(wf.Steps) == 0:
		out.Status = "no_workflow_steps_defined"
		return out, nil, nil
	}
	byChannel, err := s.providersFor(r, c)
	if err != nil {
		return triggerJSON{}, nil, err
	}
	contexts, contextKeys, err := s.resolveContexts(r, c.Scope, t.contexts)
	if err != nil {
		return triggerJSON{}, nil, err
	}
	params := &store.TriggerParams{Contexts: contexts, ContextKeys: contextKeys,
		Scope: c.Scope, Workflow: wf, TransactionID: t.transactionID, Recipients: t.recipients,
		Topics: t.topics, Broadcast: t.broadcast, ActorSubscriberID: t.actorID,
		Payload: t.payload, Overrides: t.overrides, Actor: t.actor, Tags: wf.Tags, Now: s.now(),
		ProviderFor: func(stepType string) string {
			if p := byChannel[stepType]; p != "" {
				return p
			}
			if p := fallbackProviders[stepType]; p != "" {
				return p
			}
			return provider.InAppProvider
		},
	}
	// Templates render here, before the transaction, never inside it.
	if err := engine.PlanDigests(r.Context(), s.sandbox, s.store, params); err != nil {
		return triggerJSON{}, nil, err
	}
	return out, params, nil
}

// triggered turns the store's answer to a prepared event into the API's.
func (s *Server) triggered(r *http.Request, t triggerRequest, p *store.TriggerParams, out triggerJSON, res store.TriggerResult,
	err error) (triggerJSON, error) {
	if err != nil {
		return triggerJSON{}, err
	}
	if res.Duplicate {
		return triggerJSON{}, errorf(http.StatusConflict, "transactionId "+strconv.Quote(t.transactionID)+
			" was already used in this environment; the event was not processed again")
	}
	// The in-app messages written with the trigger (engine.InAppPlanner)
	// count as sent here, and the jobs it finished (those in-app steps,
	// digest events placed) as finished; a worker counts the others.
	for k, o := range p.InApp {
		if o != nil && k < len(res.Notifications) && res.Notifications[k].ID == o.Job.NotificationID {
			for _, m := range o.Messages {
				s.metrics.MessageOutcome(m.Channel, m.ProviderID, metrics.OutcomeSent)
			}
		}
	}
	now := s.now()
	for _, j := range res.Finished {
		s.metrics.JobFinished(j.Type, j.Status, now.Sub(j.RunAt))
	}
	if len(res.MissingTopics) > 0 {
		// The established service acknowledges the event and fails the
		// fan-out of a topic it cannot find; the rest goes on.
		s.log.WarnContext(r.Context(), "trigger names topics that do not exist; their fan-out is left out",
			"topicKeys", res.MissingTopics)
	}
	if s.onTrigger != nil && res.LeftWork() {
		s.onTrigger()
	}
	return out, nil
}

// eventBroadcast triggers a workflow for every subscriber of the environment.
func (s *Server) eventBroadcast(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	t := readEvent(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	t.broadcast = true
	out, err := s.trigger(r, t)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) eventTrigger(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	t := readTrigger(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	out, err := s.trigger(r, t)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) eventTriggerBulk(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	raw, ok := o.raw["events"]
	var items []json.RawMessage
	if !ok || json.Unmarshal(raw, &items) != nil || len(items) == 0 || len(items) > maxBulkEvents {
		return invalid("events", "must be an array of 1 to 100 events", rawValue(raw))
	}
	reqs := make([]triggerRequest, len(items))
	for i, it := range items {
		eo, err := parseObject(it)
		if err != nil {
			o.fail("events."+strconv.Itoa(i), "must be an object", it)
			continue
		}
		eo.prefix, eo.errs = "events."+strconv.Itoa(i)+".", o.errs
		reqs[i] = readTrigger(eo)
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	// The events are prepared one by one, then written together: they join
	// the store's trigger groups at once.
	out := make([]triggerJSON, len(reqs))
	errs := make([]error, len(reqs))
	var params []*store.TriggerParams
	var at []int
	for i := range reqs {
		var p *store.TriggerParams
		out[i], p, errs[i] = s.prepareTrigger(r, &reqs[i])
		if errs[i] == nil && p != nil {
			params, at = append(params, p), append(at, i)
		}
	}
	if len(params) > 0 {
		for k, o := range s.store.TriggerMany(r.Context(), params) {
			i := at[k]
			out[i], errs[i] = s.triggered(r, reqs[i], params[k], out[i], o.Result, o.Err)
		}
	}
	for i, err := range errs {
		var ae *apiError
		if errors.As(err, &ae) && ae.status < 500 {
			// One event's mistake does not undo the others.
			out[i] = triggerJSON{Acknowledged: false, Status: "error", TransactionID: reqs[i].transactionID}
			s.log.DebugContext(r.Context(), "bulk trigger event rejected", "index", i, "reason", ae.message)
		} else if err != nil {
			return err
		}
	}
	if f := logctx.From(r.Context()); f != nil {
		f.TransactionID = "" // the bulk's access log names none of its events
	}
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) eventCancel(w http.ResponseWriter, r *http.Request) error {
	tx := r.PathValue("transactionId")
	if tx == "" || utf8.RuneCountInString(tx) > maxTransactionID {
		return invalid("transactionId", "must be 1 to 256 characters", tx)
	}
	n, err := s.store.TriggerCancel(r.Context(), &store.TriggerCancelParams{Scope: callerFrom(r.Context()).Scope,
		TransactionID: tx, Now: s.now()})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, n > 0)
	return nil
}
