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
)

const (
	// maxPreferenceWorkflows bounds the workflows a preferences listing shows
	// (the newest active ones).
	maxPreferenceWorkflows = 1000
	// maxBulkPreferences bounds the items of a bulk preferences update.
	maxBulkPreferences = 100
)

// channelRule is the 422 message of a key of `channels` that is not a channel.
var channelRule = "is not a channel: one of " + strings.Join(preference.Channels, ", ")

type preferencesJSON struct {
	Global    globalPreferenceJSON     `json:"global"`
	Workflows []workflowPreferenceJSON `json:"workflows"`
}

type globalPreferenceJSON struct {
	Enabled  bool            `json:"enabled"`
	Channels map[string]bool `json:"channels"`
}

type workflowPreferenceJSON struct {
	Enabled   bool                     `json:"enabled"`
	Channels  map[string]bool          `json:"channels"`
	Overrides []preferenceOverrideJSON `json:"overrides"`
	Workflow  preferenceWorkflowJSON   `json:"workflow"`
	UpdatedAt *string                  `json:"updatedAt,omitempty"`
}

type preferenceOverrideJSON struct {
	Channel string `json:"channel"`
	Source  string `json:"source"`
}

type preferenceWorkflowJSON struct {
	Slug       string `json:"slug"`
	Identifier string `json:"identifier"`
	Name       string `json:"name"`
	UpdatedAt  string `json:"updatedAt"`
}

// bulkPreferenceJSON is one workflow's preference in a bulk update's answer.
type bulkPreferenceJSON struct {
	Level    string           `json:"level"`
	Workflow bulkWorkflowJSON `json:"workflow"`
	Enabled  bool             `json:"enabled"`
	Channels map[string]bool  `json:"channels"`
}

type bulkWorkflowJSON struct {
	ID         string   `json:"id"`
	Identifier string   `json:"identifier"`
	Name       string   `json:"name"`
	Critical   bool     `json:"critical"`
	Tags       []string `json:"tags"`
	Severity   string   `json:"severity"`
}

// choicesFor are the subscriber's choices that apply to one workflow.
func choicesFor(p store.SubscriberPreferences, workflowID string) store.ChannelChoices {
	var c store.ChannelChoices
	if p.Global != nil {
		c.Global = p.Global.Channels
	}
	c.Workflow = p.Workflows[workflowID].Channels
	return c
}

// workflowChannels are the states of a workflow's step channels for the
// subscriber, and what decided each.
func workflowChannels(w store.Workflow, p store.SubscriberPreferences) (map[string]bool, []preferenceOverrideJSON) {
	wp, choices := preference.Of(w), choicesFor(p, w.ID)
	channels, overrides := map[string]bool{}, []preferenceOverrideJSON{}
	for _, ch := range preference.StepChannels(w) {
		st := wp.Resolve(ch, choices)
		channels[ch] = st.Enabled
		overrides = append(overrides, preferenceOverrideJSON{Channel: ch, Source: st.Source})
	}
	return channels, overrides
}

// subscriberPreferencesOut is the preferences listing: the global preference over the
// channels of the active workflows' steps and those the subscriber set
// globally, and each active workflow of the criticality asked for.
func subscriberPreferencesOut(p store.SubscriberPreferences, wfs []store.Workflow, criticality string) preferencesJSON {
	out := preferencesJSON{Global: globalPreferenceJSON{Enabled: true, Channels: map[string]bool{}},
		Workflows: []workflowPreferenceJSON{}}
	var global map[string]bool
	if p.Global != nil {
		global = p.Global.Channels
	}
	for ch, on := range global {
		out.Global.Channels[ch] = on
	}
	for _, w := range wfs {
		for _, ch := range preference.StepChannels(w) {
			if _, ok := out.Global.Channels[ch]; !ok {
				out.Global.Channels[ch] = true
			}
		}
		if critical := preference.Of(w).Critical; criticality == "critical" && !critical || criticality == "nonCritical" && critical {
			continue
		}
		channels, overrides := workflowChannels(w, p)
		item := workflowPreferenceJSON{Enabled: true, Channels: channels, Overrides: overrides,
			Workflow: preferenceWorkflowJSON{Slug: w.Key, Identifier: w.Key, Name: w.Name, UpdatedAt: formatTime(w.UpdatedAt)}}
		if own, ok := p.Workflows[w.ID]; ok {
			item.UpdatedAt = formatTimePtr(&own.UpdatedAt)
		}
		out.Workflows = append(out.Workflows, item)
	}
	return out
}

// readChannels reads an object of channel → boolean (null counts as absent).
func readChannels(o *object, name string, required bool) map[string]bool {
	if raw, ok := o.raw[name]; !ok || isNull(raw) {
		if required {
			o.errs.add(o.prefix+name, "is required", nil)
		}
		return nil
	}
	co := o.sub(name)
	if co == nil {
		return nil
	}
	out := map[string]bool{}
	for k, raw := range co.raw {
		if !preference.IsChannel(k) {
			co.fail(k, channelRule, raw)
			continue
		}
		if b := co.boolean(k); b != nil {
			out[k] = *b
		}
	}
	return out
}

// preferenceWorkflow finds the workflow of a preference by _id or
// workflowId: an unknown one is a 404; a critical one, whose preferences
// subscribers cannot change, a 400.
func (s *Server) preferenceWorkflow(r *http.Request, key string) (store.Workflow, error) {
	wf, err := s.store.WorkflowGet(r.Context(), callerFrom(r.Context()).Scope, key)
	if errors.Is(err, store.ErrNotFound) {
		return wf, errorf(http.StatusNotFound, "Workflow "+strconv.Quote(key)+" was not found")
	}
	if err == nil && preference.Of(wf).Critical {
		return wf, errorf(http.StatusBadRequest, "Workflow "+strconv.Quote(key)+" is critical: its preferences cannot be changed")
	}
	return wf, err
}

// activeWorkflows are the workflows a preferences listing shows.
func (s *Server) activeWorkflows(r *http.Request) ([]store.Workflow, error) {
	wfs, _, err := s.store.WorkflowList(r.Context(), &store.WorkflowListParams{Scope: callerFrom(r.Context()).Scope,
		Limit: maxPreferenceWorkflows, Active: true})
	return wfs, err
}

// preferencesList serves GET /v2/subscribers/{subscriberId}/preferences.
func (s *Server) preferencesList(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	criticality := r.URL.Query().Get("criticality")
	switch criticality {
	case "":
		criticality = "nonCritical"
	case "nonCritical", "critical", "all":
	default:
		return invalid("criticality", "must be one of nonCritical, critical, all", criticality)
	}
	prefs, err := s.store.SubscriberPreferenceGet(r.Context(), &store.SubscriberPreferenceGetParams{
		Scope: callerFrom(r.Context()).Scope, SubscriberID: sid})
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	wfs, err := s.activeWorkflows(r)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, subscriberPreferencesOut(prefs, wfs, criticality))
	return nil
}

// preferencesPatch serves PATCH /v2/subscribers/{subscriberId}/preferences:
// the global preference, or that of `workflowId`.
func (s *Server) preferencesPatch(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	channels := readChannels(o, "channels", false)
	key := o.text("workflowId", maxString)
	if err := o.errs.err(); err != nil {
		return err
	}
	change := store.PreferenceChange{Channels: channels}
	var wf store.Workflow
	if key != "" {
		if wf, err = s.preferenceWorkflow(r, key); err != nil {
			return err
		}
		change.WorkflowID = wf.ID
	}
	watched := r
	if key != "" {
		watched = s.watchWorkflowPreferences(r, sid, wf)
	} else if watched, err = s.watchGlobalPreference(r, sid); err != nil {
		return err
	}
	prefs, err := s.store.SubscriberPreferenceUpdate(watched.Context(), &store.SubscriberPreferenceUpdateParams{
		Scope: callerFrom(r.Context()).Scope, SubscriberID: sid, Changes: []store.PreferenceChange{change}, Now: s.now()})
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	wfs, err := s.activeWorkflows(r)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, subscriberPreferencesOut(prefs, wfs, "nonCritical"))
	return nil
}

// bulkItem is one item of a bulk preferences update.
type bulkItem struct {
	key      string
	channels map[string]bool
}

// readBulkPreferences reads `preferences`: 1 to 100 {workflowId, channels}.
func readBulkPreferences(r *http.Request) ([]bulkItem, error) {
	o, err := readObject(r)
	if err != nil {
		return nil, err
	}
	raw, ok := o.raw["preferences"]
	if !ok || isNull(raw) {
		return nil, invalid("preferences", "is required", nil)
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, invalid("preferences", "must be an array of {workflowId, channels}", rawValue(raw))
	}
	if len(items) == 0 || len(items) > maxBulkPreferences {
		return nil, invalid("preferences", "must have 1 to "+strconv.Itoa(maxBulkPreferences)+" items", len(items))
	}
	out := make([]bulkItem, 0, len(items))
	for i, it := range items {
		name := "preferences." + strconv.Itoa(i)
		so, err := parseObject(it)
		if err != nil {
			o.fail(name, "must be an object {workflowId, channels}", it)
			continue
		}
		so.prefix, so.errs = name+".", o.errs
		out = append(out, bulkItem{key: so.requiredText("workflowId", maxString), channels: readChannels(so, "channels", true)})
	}
	return out, o.errs.err()
}

// preferencesBulk serves PATCH /v2/subscribers/{subscriberId}/preferences/bulk:
// several workflows' preferences at once, all or nothing.
func (s *Server) preferencesBulk(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	items, err := readBulkPreferences(r)
	if err != nil {
		return err
	}
	var wfs []store.Workflow
	var missing, critical []string
	changes := make([]store.PreferenceChange, 0, len(items))
	for _, it := range items {
		wf, err := s.preferenceWorkflow(r, it.key)
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.status == http.StatusNotFound:
			missing = append(missing, strconv.Quote(it.key))
			continue
		case errors.As(err, &ae) && ae.status == http.StatusBadRequest:
			critical = append(critical, strconv.Quote(it.key))
			continue
		case err != nil:
			return err
		}
		changes = append(changes, store.PreferenceChange{WorkflowID: wf.ID, Channels: it.channels})
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
	prefs, err := s.store.SubscriberPreferenceUpdate(s.watchWorkflowPreferences(r, sid, wfs...).Context(),
		&store.SubscriberPreferenceUpdateParams{Scope: callerFrom(r.Context()).Scope, SubscriberID: sid, Changes: changes,
			Now: s.now()})
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	out := make([]bulkPreferenceJSON, 0, len(wfs))
	for _, wf := range wfs {
		channels, _ := workflowChannels(wf, prefs)
		tags := wf.Tags
		if tags == nil {
			tags = []string{}
		}
		severity := wf.Severity
		if severity == "" {
			severity = "none"
		}
		out = append(out, bulkPreferenceJSON{Level: "template", Enabled: true, Channels: channels,
			Workflow: bulkWorkflowJSON{ID: wf.ID, Identifier: wf.Key, Name: wf.Name, Critical: false, Tags: tags, Severity: severity}})
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}
