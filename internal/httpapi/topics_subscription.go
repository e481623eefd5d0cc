package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

const (
	// maxPreferenceRules bounds the preferences of one subscription update,
	// and the workflowIds and tags of one rule.
	maxPreferenceRules = 100
	// maxIdentifierPath bounds a subscription identifier in a path: a
	// custom one is at most maxIndexedBytes, a default one
	// tk_<key>:si_<subscriberId> longer.
	maxIdentifierPath = 2048
)

// defaultIdentifier is the identifier a subscription made without one is
// shown with, as the established service names it.
func defaultIdentifier(topicKey, subscriberID string) string {
	return "tk_" + topicKey + ":si_" + subscriberID
}

// shownIdentifier is a subscription's identifier on the wire.
func shownIdentifier(sub store.TopicSubscription) string {
	if sub.Identifier != "" {
		return sub.Identifier
	}
	return defaultIdentifier(sub.Topic.Key, sub.Subscriber.SubscriberID)
}

// plainMembers turns the default identifier a client sends back into none:
// it names the subscriber's plain subscription.
func plainMembers(key string, members []store.TopicMember) {
	for i, m := range members {
		if m.Identifier == defaultIdentifier(key, m.SubscriberID) {
			members[i].Identifier = ""
		}
	}
}

// subscriptionRef reads the topic key and subscription identifier of the path.
func subscriptionRef(r *http.Request) (store.TopicSubscriptionRef, error) {
	key, err := pathTopicKey(r)
	if err != nil {
		return store.TopicSubscriptionRef{}, err
	}
	ident := r.PathValue("identifier")
	if ident == "" || len(ident) > maxIdentifierPath {
		return store.TopicSubscriptionRef{}, invalid("identifier", "must be 1 to "+strconv.Itoa(maxIdentifierPath)+" bytes", ident)
	}
	ref := store.TopicSubscriptionRef{Scope: callerFrom(r.Context()).Scope, Key: key, Identifier: ident}
	if sid, ok := strings.CutPrefix(ident, defaultIdentifier(key, "")); ok && validSubscriberID(sid) {
		ref.SubscriberID = sid
	}
	return ref, nil
}

// subscriptionError maps the store's answers about one subscription.
func subscriptionError(err error, ref store.TopicSubscriptionRef) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, "Subscription "+strconv.Quote(ref.Identifier)+" of topic "+strconv.Quote(ref.Key)+" was not found")
	case errors.Is(err, store.ErrConflict):
		return errorf(http.StatusConflict, "Identifier "+strconv.Quote(ref.Identifier)+" names the subscriptions of several subscribers of topic "+
			strconv.Quote(ref.Key)+"; address one by tk_<topicKey>:si_<subscriberId>")
	}
	return err
}

type subscriptionWorkflowJSON struct {
	ID         string   `json:"id"`
	Identifier string   `json:"identifier"`
	Name       string   `json:"name"`
	Critical   bool     `json:"critical"`
	Tags       []string `json:"tags"`
	Severity   string   `json:"severity"`
}

type subscriptionPreferenceJSON struct {
	SubscriptionID string                   `json:"subscriptionId"`
	Workflow       subscriptionWorkflowJSON `json:"workflow"`
	Enabled        bool                     `json:"enabled"`
	Condition      json.RawMessage          `json:"condition,omitempty"`
}

func subscriptionPreferencesOut(sub store.TopicSubscription) []subscriptionPreferenceJSON {
	out := make([]subscriptionPreferenceJSON, 0, len(sub.Preferences))
	for _, p := range sub.Preferences {
		w, tags := p.Workflow, p.Workflow.Tags
		if tags == nil {
			tags = []string{}
		}
		severity := w.Severity
		if severity == "" {
			severity = "none"
		}
		out = append(out, subscriptionPreferenceJSON{SubscriptionID: shownIdentifier(sub), Enabled: p.Enabled,
			Condition: json.RawMessage(p.Condition), Workflow: subscriptionWorkflowJSON{ID: w.ID, Identifier: w.Key,
				Name: w.Name, Critical: w.Critical, Tags: tags, Severity: severity}})
	}
	return out
}

// topicSubscriptionGet serves GET /v2/topics/{topicKey}/subscriptions/{identifier}.
func (s *Server) topicSubscriptionGet(w http.ResponseWriter, r *http.Request) error {
	ref, err := subscriptionRef(r)
	if err != nil {
		return err
	}
	sub, err := s.store.TopicSubscriptionGet(r.Context(), &ref)
	if err != nil {
		return subscriptionError(err, ref)
	}
	out := map[string]any{"id": sub.ID, "identifier": shownIdentifier(sub), "preferences": subscriptionPreferencesOut(sub)}
	if sub.Name != nil {
		out["name"] = *sub.Name
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// topicSubscriptionPatch serves PATCH /v2/topics/{topicKey}/subscriptions/{identifier}:
// `name` (null clears it) and `preferences`, which replace the subscription's.
func (s *Server) topicSubscriptionPatch(w http.ResponseWriter, r *http.Request) error {
	ref, err := subscriptionRef(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	p := store.TopicSubscriptionUpdateParams{TopicSubscriptionRef: ref, Name: o.str("name", maxString), Now: s.now()}
	p.Preferences, p.PreferencesSet = readPreferenceRules(o)
	if err := o.errs.err(); err != nil {
		return err
	}
	sub, err := s.store.TopicSubscriptionUpdate(r.Context(), &p)
	if err != nil {
		return subscriptionError(err, ref)
	}
	out := struct {
		subscriptionJSON
		Name        *string                      `json:"name,omitempty"`
		Preferences []subscriptionPreferenceJSON `json:"preferences"`
	}{subscriptionsOut([]store.TopicSubscription{sub})[0], sub.Name, subscriptionPreferencesOut(sub)}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// readPreferenceRules reads `preferences`: each a workflowId, a
// {workflowId, enabled?, condition?} or a {filter: {workflowIds?, tags?},
// enabled?, condition?}.
func readPreferenceRules(o *object) ([]store.TopicPreferenceRule, bool) {
	raw, ok := o.raw["preferences"]
	if !ok {
		return nil, false
	}
	var items []json.RawMessage
	if !isNull(raw) && json.Unmarshal(raw, &items) != nil {
		o.fail("preferences", "must be an array of workflowIds, {workflowId} or {filter} objects", raw)
		return nil, false
	}
	if len(items) > maxPreferenceRules {
		o.errs.add("preferences", "must have at most "+strconv.Itoa(maxPreferenceRules)+" items", len(items))
		return nil, false
	}
	rules := []store.TopicPreferenceRule{}
	for i, it := range items {
		name := "preferences." + strconv.Itoa(i)
		var wid string
		if json.Unmarshal(it, &wid) == nil {
			if wid == "" || len(wid) > maxIndexedBytes {
				o.errs.add(name, "must be a workflowId of 1 to 1024 bytes", wid)
			}
			rules = append(rules, store.TopicPreferenceRule{WorkflowIDs: []string{wid}})
			continue
		}
		var m map[string]json.RawMessage
		if isNull(it) || json.Unmarshal(it, &m) != nil {
			o.fail(name, "must be a workflowId, a {workflowId} or a {filter} object", it)
			continue
		}
		po := &object{prefix: name + ".", raw: m, errs: o.errs}
		var rule store.TopicPreferenceRule
		rule.Enabled = po.boolean("enabled")
		rule.Condition, _ = po.jsonObject("condition", maxDataBytes)
		switch {
		case po.has("filter") && !isNull(po.raw["filter"]):
			if f := po.sub("filter"); f != nil {
				rule.WorkflowIDs, _ = f.strings("workflowIds", maxPreferenceRules, maxString)
				rule.Tags, _ = f.strings("tags", maxPreferenceRules, maxString)
			}
		case po.has("workflowId"):
			rule.WorkflowIDs = []string{po.requiredText("workflowId", maxString)}
		default:
			po.errs.add(name+".workflowId", "is required without a filter", nil)
		}
		rules = append(rules, rule)
	}
	return rules, true
}
