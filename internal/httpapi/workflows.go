package httpapi

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/preference"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// stepTypes are the workflow step types Herald accepts.
var stepTypes = []string{"in_app", "email", "sms", "chat", "push", "delay", "digest", "throttle", "http_request"}

const maxSteps = 20

type workflowStepJSON struct {
	ID                 string         `json:"_id"`
	StepID             string         `json:"stepId"`
	Slug               string         `json:"slug"`
	Name               string         `json:"name"`
	Type               string         `json:"type"`
	Origin             string         `json:"origin"`
	WorkflowID         string         `json:"workflowId"`
	WorkflowDatabaseID string         `json:"workflowDatabaseId"`
	Controls           map[string]any `json:"controls"`
	ControlValues      orderedValues  `json:"controlValues"`
	Variables          map[string]any `json:"variables"`
}

type workflowJSON struct {
	ID                   string             `json:"_id"`
	WorkflowID           string             `json:"workflowId"`
	Slug                 string             `json:"slug"`
	Name                 string             `json:"name"`
	Description          string             `json:"description"`
	Tags                 []string           `json:"tags"`
	Active               bool               `json:"active"`
	Critical             bool               `json:"critical"`
	IsTranslationEnabled bool               `json:"isTranslationEnabled"`
	PayloadSchema        json.RawMessage    `json:"payloadSchema"`
	Steps                []workflowStepJSON `json:"steps"`
	StepTypeOverviews    []string           `json:"stepTypeOverviews"`
	Origin               string             `json:"origin"`
	Type                 string             `json:"type"` // BRIDGE (synced from a Framework app) or REGULAR
	Preferences          map[string]any     `json:"preferences"`
	Status               string             `json:"status"`
	Severity             string             `json:"severity"`
	LastTriggeredAt      *string            `json:"lastTriggeredAt"`
	CreatedAt            string             `json:"createdAt"`
	UpdatedAt            string             `json:"updatedAt"`
}

func workflowOut(w store.Workflow) workflowJSON {
	out := workflowJSON{
		ID: w.ID, WorkflowID: w.Key, Slug: w.Key, Name: w.Name, Description: w.Description, Tags: w.Tags,
		Active: w.Active, Critical: w.Critical, PayloadSchema: json.RawMessage(w.PayloadSchema),
		Steps: make([]workflowStepJSON, 0, len(w.Steps)), StepTypeOverviews: []string{}, Origin: "external", Type: "REGULAR",
		Preferences: preferencesOut(w.Preferences), Status: "ACTIVE", Severity: w.Severity,
		LastTriggeredAt: formatTimePtr(w.LastTriggeredAt), CreatedAt: formatTime(w.CreatedAt), UpdatedAt: formatTime(w.UpdatedAt),
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if w.Origin == store.OriginBridge {
		out.Type = "BRIDGE"
	}
	if !w.Active {
		out.Status = "INACTIVE"
	}
	if out.Severity == "" {
		out.Severity = "none"
	}
	for _, s := range w.Steps {
		values := s.ControlValues
		if values == nil {
			values = map[string]any{}
		}
		if defaults := controlDefaults[s.Type]; defaults != nil {
			values = maps.Clone(values)
			for k, v := range defaults {
				if _, ok := values[k]; !ok {
					values[k] = v
				}
			}
		}
		controls := map[string]any{"values": orderedValues{values, s.ControlOrder}}
		if len(s.ControlSchema) > 0 { // a synced step: the schema its bridge declares
			controls["dataSchema"] = json.RawMessage(s.ControlSchema)
		}
		out.Steps = append(out.Steps, workflowStepJSON{
			ID: s.ID, StepID: s.StepID, Slug: s.StepID, Name: s.Name, Type: s.Type, Origin: "external",
			WorkflowID: w.Key, WorkflowDatabaseID: w.ID, Controls: controls,
			ControlValues: orderedValues{values, s.ControlOrder}, Variables: map[string]any{},
		})
		out.StepTypeOverviews = append(out.StepTypeOverviews, s.Type)
	}
	return out
}

// controlDefaults are the controls a step answers with when they were not
// written: the engine's defaults, which the established SDK requires in
// its answers (an e-mail's subject, a throttle's type and threshold, a
// request's method).
var controlDefaults = map[string]map[string]any{
	"email":        {"subject": ""},
	"throttle":     {"type": "fixed", "threshold": 1},
	"http_request": {"method": "POST"},
}

// preferencesOut shows a workflow's preferences in the established shape:
// every channel enabled, overlaid with the stored `all` and `channels` —
// read from `default`, from `workflow` (the established SDK's request
// shape), or from the top level; `user`, when one was sent, likewise.
func preferencesOut(stored store.JSON) map[string]any {
	channels := map[string]any{}
	for _, c := range []string{"in_app", "email", "sms", "chat", "push"} {
		channels[c] = map[string]any{"enabled": true}
	}
	def := map[string]any{"all": map[string]any{"enabled": true, "readOnly": false}, "channels": channels}
	var m map[string]any
	if len(stored) > 0 && json.Unmarshal(stored, &m) == nil && m != nil {
		src := m
		for _, k := range []string{"default", "workflow"} {
			if d, ok := m[k].(map[string]any); ok {
				src = d
				break
			}
		}
		for _, k := range []string{"all", "channels"} {
			if v, ok := src[k].(map[string]any); ok {
				def[k] = v
			}
		}
	}
	var user map[string]any
	if u, ok := m["user"].(map[string]any); ok {
		all := map[string]any{"enabled": true, "readOnly": false}
		if a, ok := u["all"].(map[string]any); ok {
			maps.Copy(all, a)
		}
		channels, ok := u["channels"].(map[string]any)
		if !ok {
			channels = map[string]any{}
		}
		user = map[string]any{"all": all, "channels": channels}
	}
	return map[string]any{"user": user, "default": def}
}

// slugify derives an identifier from a name, at most maxIndexedBytes long.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if b.Len()+utf8.RuneLen(r) > maxIndexedBytes {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// readWorkflow reads a create or update body into w; the sandbox checks the
// steps' templates.
func readWorkflow(o *object, w *store.Workflow, sb *sandbox.Sandbox) {
	w.Name = o.requiredText("name", maxString)
	if key := o.indexed("workflowId"); key.Value != nil && *key.Value != "" {
		w.Key = *key.Value
	} else if w.Key == "" {
		w.Key = slugify(w.Name)
		if w.Key == "" && w.Name != "" {
			w.Key = "workflow-" + randomSuffix()
		}
	}
	w.Description = o.text("description", 4*maxString)
	if tags, ok := o.strings("tags", 16, 64); ok {
		w.Tags = tags
	}
	if b := o.boolean("active"); b != nil {
		w.Active = *b
	}
	critical := o.boolean("critical")
	if critical != nil {
		w.Critical = *critical
	}
	w.Severity = o.oneOf("severity", "high", "medium", "low", "none")
	if v, set := o.jsonObject("preferences", maxDataBytes); set {
		w.Preferences = v
		// Preferences that subscribers may not change (all.readOnly) make
		// the workflow critical, as in the established API; sent without
		// `critical`, preferences without it make it not critical.
		if readOnly := preference.Of(store.Workflow{Preferences: v}).Critical; readOnly || critical == nil {
			w.Critical = readOnly
		}
	}
	if v, set := o.jsonObject("payloadSchema", maxDataBytes); set {
		w.PayloadSchema = v
	}
	raw, ok := o.raw["steps"]
	if !ok || isNull(raw) {
		return
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.fail("steps", "must be an array of steps", raw)
		return
	}
	if len(items) > maxSteps {
		o.fail("steps", "must have at most 20 steps", raw)
		return
	}
	old := map[string]store.Step{}
	for _, s := range w.Steps {
		old[s.StepID] = s
	}
	w.Steps = make([]store.Step, 0, len(items))
	used := map[string]bool{}
	for i, it := range items {
		so, err := parseObject(it)
		if err != nil {
			o.fail("steps."+strconv.Itoa(i), "must be an object", it)
			continue
		}
		so.prefix, so.errs = "steps."+strconv.Itoa(i)+".", o.errs
		s := store.Step{Name: so.requiredText("name", maxString), Type: so.requiredOneOf("type", stepTypes...)}
		s.StepID = so.text("stepId", maxString)
		if s.StepID == "" {
			s.StepID = slugify(s.Name)
		}
		for base, n := s.StepID, 2; used[s.StepID]; n++ {
			s.StepID = base + "-" + strconv.Itoa(n)
		}
		used[s.StepID] = true
		if v, set := so.jsonObject("controlValues", maxDataBytes); set && v != nil {
			_ = json.Unmarshal(v, &s.ControlValues)
			s.ControlOrder = sandbox.KeyOrder(v)
			checkControls(sb, so, s.ControlValues)
			checkStepControls(so, s.Type, s.ControlValues)
			if s.Type == "email" {
				checkEmailLayoutID(so, s.ControlValues)
			}
		}
		if prev, ok := old[s.StepID]; ok && prev.Type == s.Type {
			s.ID = prev.ID // keep the step's identity across updates
			s.ControlSchema = prev.ControlSchema
		} else {
			s.ID = id.New()
		}
		w.Steps = append(w.Steps, s)
	}
}

// checkControls refuses, naming each field, a template that does not parse
// and a link whose template renders — with no payload — to something other
// than an http(s) URL or a relative path (javascript:, data:, …). A link
// that only some payloads make unsafe fails those jobs when they render.
func checkControls(sb *sandbox.Sandbox, so *object, values map[string]any) {
	field := so.prefix + "controlValues."
	bad := map[string]bool{}
	for _, e := range sb.CheckAll(values) {
		so.errs.add(field+e.Field, "is not a valid template: "+e.Msg, nil)
		bad[e.Field] = true
	}
	for _, l := range sandbox.Links(values) {
		if bad[l.Path] {
			continue
		}
		out, err := sb.Render(l.Value, nil)
		if err == nil && sandbox.CheckURL(out) != nil {
			so.errs.add(field+l.Path, sandbox.ErrUnsafeURL.Error(), l.Value)
		}
	}
}

// checkStepControls refuses, naming each field, controls the step could
// not run with (engine.CheckControls: conditions, throttle, HTTP request,
// cron, look-back window).
func checkStepControls(so *object, stepType string, values map[string]any) {
	for _, e := range engine.CheckControls(stepType, values) {
		v := any(nil)
		if top, _, _ := strings.Cut(e.Field, "."); top != "" {
			v = values[top]
		}
		so.errs.add(so.prefix+"controlValues."+e.Field, e.Msg, v)
	}
}

func (s *Server) workflowCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	c := callerFrom(r.Context())
	now := s.now()
	wf := store.Workflow{ID: id.New(), OrganizationID: c.OrganizationID, EnvironmentID: c.EnvironmentID, Active: true,
		Severity: "none", CreatedAt: now, UpdatedAt: now}
	readWorkflow(o, &wf, s.sandbox)
	if err := o.errs.err(); err != nil {
		return err
	}
	if wf.Severity == "" {
		wf.Severity = "none"
	}
	r = s.watchWorkflowCreated(r, &wf)
	if err := s.store.WorkflowCreate(r.Context(), &wf); err != nil {
		return workflowConflict(err, wf.Key)
	}
	s.writeJSON(w, http.StatusCreated, workflowOut(wf))
	return nil
}

// stepShape is a workflow's steps as their stepIds and types, in order.
func stepShape(steps []store.Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(s.StepID + "\x00" + s.Type + "\x00")
	}
	return b.String()
}

func workflowConflict(err error, key string) error {
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "A workflow with workflowId "+strconv.Quote(key)+" already exists")
	}
	return err
}

func (s *Server) workflowGet(w http.ResponseWriter, r *http.Request) error {
	wf, err := s.pathWorkflow(r)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, workflowOut(wf))
	return nil
}

func (s *Server) pathWorkflow(r *http.Request) (store.Workflow, error) {
	key := r.PathValue("workflowId")
	wf, err := s.store.WorkflowGet(r.Context(), callerFrom(r.Context()).Scope, key)
	if errors.Is(err, store.ErrNotFound) {
		return wf, errorf(http.StatusNotFound, "Workflow "+strconv.Quote(key)+" was not found")
	}
	return wf, err
}

func (s *Server) workflowList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := store.WorkflowListParams{Scope: callerFrom(r.Context()).Scope, Limit: 10}
	errs := fieldErrors{}
	offsetPage(q, errs, &p.Limit, &p.Offset)
	p.Query = q.Get("query")
	if err := errs.err(); err != nil {
		return err
	}
	wfs, total, err := s.store.WorkflowList(r.Context(), &p)
	if err != nil {
		return err
	}
	out := make([]workflowJSON, 0, len(wfs))
	for _, wf := range wfs {
		out = append(out, workflowOut(wf))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"workflows": out, "totalCount": total})
	return nil
}

func (s *Server) workflowUpdate(w http.ResponseWriter, r *http.Request) error {
	wf, err := s.pathWorkflow(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	oldKey, oldSteps, before := wf.Key, stepShape(wf.Steps), s.workflowBefore(r, wf)
	readWorkflow(o, &wf, s.sandbox)
	if err := o.errs.err(); err != nil {
		return err
	}
	if wf.Origin == store.OriginBridge && (wf.Key != oldKey || stepShape(wf.Steps) != oldSteps) {
		return errorf(http.StatusBadRequest, "Workflow "+strconv.Quote(oldKey)+" was synced from a bridge: its workflowId and"+
			" steps are written in code (change them there and sync again); its settings and control values can change here")
	}
	if wf.Severity == "" {
		wf.Severity = "none"
	}
	wf.UpdatedAt = s.now()
	if err := s.store.WorkflowUpdate(s.watchWorkflowUpdated(r, &wf, before).Context(), &wf); err != nil {
		return workflowConflict(err, wf.Key)
	}
	if wf.Key != oldKey { // its translations follow a new workflowId
		if err := s.store.TranslationMove(r.Context(), &store.TranslationKey{Scope: callerFrom(r.Context()).Scope,
			ResourceType: store.TranslationWorkflow, ResourceID: oldKey}, wf.Key); err != nil {
			return err
		}
	}
	s.writeJSON(w, http.StatusOK, workflowOut(wf))
	return nil
}

func (s *Server) workflowDelete(w http.ResponseWriter, r *http.Request) error {
	wf, err := s.pathWorkflow(r)
	if err != nil {
		return err
	}
	if err := s.store.WorkflowDelete(s.watchWorkflowDeleted(r, wf).Context(), &store.WorkflowDeleteParams{
		Scope: callerFrom(r.Context()).Scope, ID: wf.ID, Now: s.now()}); err != nil {
		return err
	}
	// Its translations go with it (a new workflow of that workflowId starts without any).
	if err := s.store.TranslationDelete(r.Context(), &store.TranslationKey{Scope: callerFrom(r.Context()).Scope,
		ResourceType: store.TranslationWorkflow, ResourceID: wf.Key}); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	// 204 without a body, as the established v2 workflow API answers (its
	// SDK accepts nothing else).
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// offsetPage reads the limit (1–100) and offset (≥ 0) of a list that pages
// by offset into limit and offset, which hold the defaults.
func offsetPage(q url.Values, errs fieldErrors, limit, offset *int) {
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			errs.add("limit", "must be an integer from 1 to 100", v)
		}
		*limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs.add("offset", "must be a non-negative integer", v)
		}
		*offset = n
	}
}
