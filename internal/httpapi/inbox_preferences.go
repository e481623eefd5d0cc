package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/preference"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// The preference routes of the inbox clients (/v1/inbox/preferences…): the
// session subscriber's channel preferences, kept by the same store methods
// as /v2/subscribers/{subscriberId}/preferences, in the clients' shape: one
// object per level, the channels flat in PATCH bodies.

// inboxPreferenceJSON is a preference as @novu/js reads it.
type inboxPreferenceJSON struct {
	Level    string            `json:"level"`
	Enabled  bool              `json:"enabled"`
	Channels map[string]bool   `json:"channels"`
	Workflow *bulkWorkflowJSON `json:"workflow,omitempty"`
}

// inboxGlobalOut is the global preference: the channels of the active
// workflows' steps and those the subscriber set globally, in_app always.
func inboxGlobalOut(p store.SubscriberPreferences, wfs []store.Workflow) inboxPreferenceJSON {
	out := inboxPreferenceJSON{Level: "global", Enabled: true, Channels: map[string]bool{"in_app": true}}
	for _, w := range wfs {
		for _, ch := range preference.StepChannels(w) {
			out.Channels[ch] = true
		}
	}
	if p.Global != nil {
		for ch, on := range p.Global.Channels {
			out.Channels[ch] = on
		}
	}
	return out
}

// inboxWorkflowOut is a workflow's preference: the state of each of its
// step channels for the subscriber.
func inboxWorkflowOut(w store.Workflow, p store.SubscriberPreferences) inboxPreferenceJSON {
	channels, _ := workflowChannels(w, p)
	tags := w.Tags
	if tags == nil {
		tags = []string{}
	}
	return inboxPreferenceJSON{Level: "template", Enabled: true, Channels: channels,
		Workflow: &bulkWorkflowJSON{ID: w.ID, Identifier: w.Key, Name: w.Name, Critical: preference.Of(w).Critical, Tags: tags,
			Severity: wire.Severity(w.Severity)}}
}

// sessionPreferences reads the session subscriber's preferences.
func (s *Server) sessionPreferences(r *http.Request) (store.SubscriberPreferences, error) {
	c := callerFrom(r.Context())
	return s.store.SubscriberPreferenceGet(r.Context(), &store.SubscriberPreferenceGetParams{Scope: c.Scope,
		SubscriberID: c.Subscriber.SubscriberID})
}

// updateSessionPreferences applies changes to the session subscriber's
// preferences.
func (s *Server) updateSessionPreferences(r *http.Request, changes []store.PreferenceChange) (store.SubscriberPreferences, error) {
	c := callerFrom(r.Context())
	return s.store.SubscriberPreferenceUpdate(r.Context(), &store.SubscriberPreferenceUpdateParams{Scope: c.Scope,
		SubscriberID: c.Subscriber.SubscriberID, Changes: changes, Now: s.now()})
}

// inboxPreferencesList serves GET /v1/inbox/preferences: the global
// preference, then one per active workflow of the criticality asked for
// (nonCritical unless told), with any of tags[] and one of severity.
func (s *Server) inboxPreferencesList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	criticality := q.Get("criticality")
	switch criticality {
	case "":
		criticality = "nonCritical"
	case "nonCritical", "critical", "all":
	default:
		return invalid("criticality", "must be one of nonCritical, critical, all", criticality)
	}
	tags := append(q["tags[]"], q["tags"]...)
	if len(tags) > maxTagsPerGroup {
		return invalid("tags", "must have at most "+strconv.Itoa(maxTagsPerGroup)+" tags", len(tags))
	}
	var severity []string
	for _, v := range append(q["severity[]"], q["severity"]...) {
		if !slices.Contains(store.Severities, v) {
			return invalid("severity", "must be one of "+strings.Join(store.Severities, ", "), v)
		}
		severity = append(severity, v)
	}
	prefs, err := s.sessionPreferences(r)
	if err != nil {
		return err
	}
	wfs, err := s.activeWorkflows(r)
	if err != nil {
		return err
	}
	out := []inboxPreferenceJSON{inboxGlobalOut(prefs, wfs)}
	for _, wf := range wfs {
		critical := preference.Of(wf).Critical
		switch {
		case criticality == "critical" && !critical, criticality == "nonCritical" && critical:
			continue
		case len(tags) > 0 && !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(wf.Tags, t) }):
			continue
		case len(severity) > 0 && !slices.Contains(severity, wire.Severity(wf.Severity)):
			continue
		}
		out = append(out, inboxWorkflowOut(wf, prefs))
	}
	s.writeInbox(w, r, out)
	return nil
}

// inboxPreferencesGlobal serves GET /v1/inbox/preferences/global.
func (s *Server) inboxPreferencesGlobal(w http.ResponseWriter, r *http.Request) error {
	prefs, err := s.sessionPreferences(r)
	if err != nil {
		return err
	}
	wfs, err := s.activeWorkflows(r)
	if err != nil {
		return err
	}
	s.writeInbox(w, r, inboxGlobalOut(prefs, wfs))
	return nil
}

// readFlatChannels reads the channels of a PATCH body, flat at its top
// level ({"in_app": false, "email": true}); keep names the other keys the
// body may hold.
func readFlatChannels(o *object, keep ...string) map[string]bool {
	out := map[string]bool{}
	for k, raw := range o.raw {
		if slices.Contains(keep, k) {
			continue
		}
		if !preference.IsChannel(k) {
			o.fail(k, channelRule, raw)
			continue
		}
		if b := o.boolean(k); b != nil {
			out[k] = *b
		}
	}
	return out
}

// inboxPreferencesPatch serves PATCH /v1/inbox/preferences: the global
// preference. A schedule is not kept by Herald: one is refused rather than
// dropped.
func (s *Server) inboxPreferencesPatch(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	channels := readFlatChannels(o, "schedule")
	if raw, ok := o.raw["schedule"]; ok && !isNull(raw) {
		o.fail("schedule", "is not supported: Herald keeps no delivery schedules", raw)
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	watched, err := s.watchGlobalPreference(r, callerFrom(r.Context()).Subscriber.SubscriberID)
	if err != nil {
		return err
	}
	prefs, err := s.updateSessionPreferences(watched, []store.PreferenceChange{{Channels: channels}})
	if err != nil {
		return err
	}
	wfs, err := s.activeWorkflows(r)
	if err != nil {
		return err
	}
	s.writeInbox(w, r, inboxGlobalOut(prefs, wfs))
	return nil
}

// inboxPreferencesWorkflowPatch serves PATCH /v1/inbox/preferences/{workflowId}:
// one workflow's preference, the workflow named by _id or workflowId.
// `enabled`, which the preference answers computed, is accepted and not kept.
func (s *Server) inboxPreferencesWorkflowPatch(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("workflowId")
	if key == "" || len(key) > maxString {
		return invalid("workflowId", "must be a workflow's id or identifier", key)
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	channels := readFlatChannels(o, "enabled")
	o.boolean("enabled")
	if err := o.errs.err(); err != nil {
		return err
	}
	wf, err := s.preferenceWorkflow(r, key)
	if err != nil {
		return err
	}
	prefs, err := s.updateSessionPreferences(s.watchWorkflowPreferences(r, callerFrom(r.Context()).Subscriber.SubscriberID, wf),
		[]store.PreferenceChange{{WorkflowID: wf.ID, Channels: channels}})
	if err != nil {
		return err
	}
	s.writeInbox(w, r, inboxWorkflowOut(wf, prefs))
	return nil
}

// inboxPreferencesBulk serves PATCH /v1/inbox/preferences/bulk:
// {"preferences": [{"workflowId", "in_app"?, …}]}, all or nothing.
func (s *Server) inboxPreferencesBulk(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	raw, ok := o.raw["preferences"]
	if !ok || isNull(raw) {
		return invalid("preferences", "is required", nil)
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return invalid("preferences", "must be an array of {workflowId, <channel>: boolean}", rawValue(raw))
	}
	if len(items) == 0 || len(items) > maxBulkPreferences {
		return invalid("preferences", "must have 1 to "+strconv.Itoa(maxBulkPreferences)+" items", len(items))
	}
	keys := make([]string, len(items))
	changes := make([]store.PreferenceChange, len(items))
	for i, it := range items {
		name := "preferences." + strconv.Itoa(i)
		so, err := parseObject(it)
		if err != nil {
			o.fail(name, "must be an object {workflowId, <channel>: boolean}", it)
			continue
		}
		so.prefix, so.errs = name+".", o.errs
		keys[i] = so.requiredText("workflowId", maxString)
		changes[i].Channels = readFlatChannels(so, "workflowId")
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	wfs := make([]store.Workflow, 0, len(items))
	var missing, critical []string
	for i, key := range keys {
		wf, err := s.preferenceWorkflow(r, key)
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.status == http.StatusNotFound:
			missing = append(missing, strconv.Quote(key))
			continue
		case errors.As(err, &ae) && ae.status == http.StatusBadRequest:
			critical = append(critical, strconv.Quote(key))
			continue
		case err != nil:
			return err
		}
		changes[i].WorkflowID = wf.ID
		if !slices.ContainsFunc(wfs, func(x store.Workflow) bool { return x.ID == wf.ID }) {
			wfs = append(wfs, wf)
		}
	}
	if len(missing) > 0 {
		return errorf(http.StatusNotFound, "Workflows not found: "+strings.Join(missing, ", "))
	}
	if len(critical) > 0 {
		return errorf(http.StatusBadRequest, "Critical workflows, whose preferences cannot be changed: "+strings.Join(critical, ", "))
	}
	prefs, err := s.updateSessionPreferences(s.watchWorkflowPreferences(r, callerFrom(r.Context()).Subscriber.SubscriberID, wfs...),
		changes)
	if err != nil {
		return err
	}
	out := make([]inboxPreferenceJSON, 0, len(wfs))
	for _, wf := range wfs {
		out = append(out, inboxWorkflowOut(wf, prefs))
	}
	s.writeInbox(w, r, out)
	return nil
}
