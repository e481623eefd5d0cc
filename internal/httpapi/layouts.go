package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// maxLayoutBody bounds a layout's e-mail body (the sandbox's template size).
const maxLayoutBody = 256 << 10

type layoutJSON struct {
	ID                   string         `json:"_id"`
	LayoutID             string         `json:"layoutId"`
	Slug                 string         `json:"slug"`
	Name                 string         `json:"name"`
	IsDefault            bool           `json:"isDefault"`
	IsTranslationEnabled bool           `json:"isTranslationEnabled"`
	Origin               string         `json:"origin"`
	Type                 string         `json:"type"`
	CreatedAt            string         `json:"createdAt"`
	UpdatedAt            string         `json:"updatedAt"`
	Controls             map[string]any `json:"controls"`
}

func layoutOut(l store.Layout) layoutJSON {
	values := map[string]any{}
	if len(l.ControlValues) > 0 {
		_ = json.Unmarshal(l.ControlValues, &values)
	}
	return layoutJSON{ID: l.ID, LayoutID: l.Key, Slug: l.Key, Name: l.Name, IsDefault: l.IsDefault,
		IsTranslationEnabled: l.IsTranslationEnabled, Origin: "novu-cloud", Type: "BRIDGE",
		CreatedAt: formatTime(l.CreatedAt), UpdatedAt: formatTime(l.UpdatedAt), Controls: map[string]any{"values": values}}
}

func (s *Server) pathLayout(r *http.Request) (store.Layout, error) {
	key := r.PathValue("layoutId")
	l, err := s.store.LayoutGet(r.Context(), callerFrom(r.Context()).Scope, key)
	if errors.Is(err, store.ErrNotFound) {
		return l, errorf(http.StatusNotFound, "Layout "+strconv.Quote(key)+" was not found")
	}
	return l, err
}

func layoutConflict(err error, key string) error {
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "A layout with layoutId "+strconv.Quote(key)+" already exists")
	}
	return err
}

// layoutKey reads an optional layoutId, else derives one from the name.
func layoutKey(o *object, name string) (key string, derived bool) {
	if f := o.indexed("layoutId"); f.Value != nil && *f.Value != "" {
		return *f.Value, false
	}
	key = slugify(name)
	if key == "" {
		key = "layout-" + randomSuffix()
	}
	return key, true
}

func (s *Server) layoutCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	c := callerFrom(r.Context())
	now := s.now()
	l := store.Layout{ID: id.New(), OrganizationID: c.OrganizationID, EnvironmentID: c.EnvironmentID, CreatedAt: now, UpdatedAt: now}
	l.Name = o.requiredText("name", maxString)
	l.Key, _ = layoutKey(o, l.Name)
	if b := o.boolean("isTranslationEnabled"); b != nil {
		l.IsTranslationEnabled = *b
	}
	o.oneOf("__source", "dashboard")
	if err := o.errs.err(); err != nil {
		return err
	}
	if err := s.store.LayoutCreate(r.Context(), &l); err != nil {
		return layoutConflict(err, l.Key)
	}
	s.writeJSON(w, http.StatusCreated, layoutOut(l))
	return nil
}

func (s *Server) layoutGet(w http.ResponseWriter, r *http.Request) error {
	l, err := s.pathLayout(r)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, layoutOut(l))
	return nil
}

func (s *Server) layoutList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := store.LayoutListParams{Scope: callerFrom(r.Context()).Scope, Limit: 50, OrderBy: "createdAt", Desc: true}
	errs := fieldErrors{}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			errs.add("limit", "must be an integer from 1 to 100", v)
		}
		p.Limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs.add("offset", "must be a non-negative integer", v)
		}
		p.Offset = n
	}
	if v, ok := q["orderBy"]; ok {
		switch v[0] {
		case "createdAt", "updatedAt", "name":
			p.OrderBy = v[0]
		default:
			errs.add("orderBy", "must be one of [createdAt updatedAt name]", v[0])
		}
	}
	if v, ok := q["orderDirection"]; ok {
		switch v[0] {
		case "ASC", "DESC":
			p.Desc = v[0] == "DESC"
		default:
			errs.add("orderDirection", "must be one of [ASC DESC]", v[0])
		}
	}
	p.Query = q.Get("query")
	if len(p.Query) > maxIndexedBytes {
		errs.add("query", "must be at most 1024 bytes", p.Query)
	}
	if err := errs.err(); err != nil {
		return err
	}
	list, total, err := s.store.LayoutList(r.Context(), &p)
	if err != nil {
		return err
	}
	out := make([]layoutJSON, 0, len(list))
	for _, l := range list {
		out = append(out, layoutOut(l))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"layouts": out, "totalCount": total})
	return nil
}

func (s *Server) layoutUpdate(w http.ResponseWriter, r *http.Request) error {
	l, err := s.pathLayout(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	l.Name = o.requiredText("name", maxString)
	if b := o.boolean("isTranslationEnabled"); b != nil {
		l.IsTranslationEnabled = *b
	}
	values, set := readLayoutControls(o, s.sandbox)
	if err := o.errs.err(); err != nil {
		return err
	}
	if set {
		if err := checkLayoutEmail(values); err != nil {
			return err
		}
		l.ControlValues = values
	}
	l.UpdatedAt = s.now()
	if err := s.store.LayoutUpdate(r.Context(), &l); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, layoutOut(l))
	return nil
}

// readLayoutControls reads controlValues: {email?: {body, editorType}} or
// null (set, nil: cleared). Keys other than email are not kept.
func readLayoutControls(o *object, sb *sandbox.Sandbox) (store.JSON, bool) {
	raw, ok := o.raw["controlValues"]
	if !ok {
		return nil, false
	}
	if isNull(raw) {
		return nil, true
	}
	cv := o.sub("controlValues")
	if cv == nil {
		return nil, false
	}
	email := cv.sub("email")
	if email == nil {
		if len(o.errs) > 0 {
			return nil, false
		}
		return store.JSON(`{}`), true
	}
	body := email.requiredText("body", maxLayoutBody)
	if body != "" {
		if err := sb.Check(body); err != nil {
			email.fail("body", "is not a valid template: "+err.Error(), nil)
		}
	}
	editor := email.oneOf("editorType", "html", "block")
	if len(o.errs) > 0 {
		return nil, false
	}
	if editor == "" {
		editor = "block"
	}
	out, _ := json.Marshal(map[string]any{"email": map[string]string{"body": body, "editorType": editor}})
	return out, true
}

// htmlContentVariable is the content variable as an HTML layout must hold it.
var htmlContentVariable = regexp.MustCompile(`\{\{\s*` + engine.LayoutContentVariable + `\s*\}\}`)

// checkLayoutEmail applies the established API's rules to a layout's
// e-mail body: an HTML document or Maily JSON as its editor type says,
// holding the content variable (400 otherwise).
func checkLayoutEmail(values store.JSON) error {
	body, editor := engine.LayoutEmailBody(values)
	if body == "" {
		return nil
	}
	maily, isMaily := mailyDoc(body)
	isHTML := strings.Contains(body, "<html") && strings.Contains(body, "</html>") &&
		strings.Contains(body, "<body") && strings.Contains(body, "</body>")
	switch {
	case editor == "html" && !isHTML:
		return errorf(http.StatusBadRequest, "Content must be a valid HTML content")
	case editor == "block" && !isMaily:
		return errorf(http.StatusBadRequest, "Content must be a valid Maily JSON content")
	case isMaily && !mailyHasVariable(maily, engine.LayoutContentVariable, 0),
		!isMaily && !htmlContentVariable.MatchString(body):
		return errorf(http.StatusBadRequest, `The layout body should contain the "content" variable`)
	}
	return nil
}

// mailyDoc parses a body that is Maily (TipTap) JSON: an object of type "doc".
func mailyDoc(body string) (map[string]any, bool) {
	if !strings.HasPrefix(strings.TrimSpace(body), "{") {
		return nil, false
	}
	var doc map[string]any
	if json.Unmarshal([]byte(body), &doc) != nil || doc["type"] != "doc" {
		return nil, false
	}
	return doc, true
}

// mailyHasVariable reports whether a Maily node holds a variable node of that id.
func mailyHasVariable(node map[string]any, name string, depth int) bool {
	if depth > 256 {
		return false
	}
	if node["type"] == "variable" {
		if attrs, ok := node["attrs"].(map[string]any); ok && attrs["id"] == name {
			return true
		}
	}
	children, _ := node["content"].([]any)
	for _, c := range children {
		if m, ok := c.(map[string]any); ok && mailyHasVariable(m, name, depth+1) {
			return true
		}
	}
	return false
}

func (s *Server) layoutDelete(w http.ResponseWriter, r *http.Request) error {
	l, err := s.pathLayout(r)
	if err != nil {
		return err
	}
	err = s.store.LayoutDelete(r.Context(), &store.LayoutDeleteParams{Scope: callerFrom(r.Context()).Scope, ID: l.ID, Now: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Layout "+strconv.Quote(l.Key)+" is being used as a default layout, it can not be deleted")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) layoutDuplicate(w http.ResponseWriter, r *http.Request) error {
	orig, err := s.pathLayout(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	now := s.now()
	l := store.Layout{ID: id.New(), OrganizationID: orig.OrganizationID, EnvironmentID: orig.EnvironmentID,
		ControlValues: orig.ControlValues, CreatedAt: now, UpdatedAt: now}
	l.Name = o.requiredText("name", maxString)
	key, derived := layoutKey(o, l.Name)
	l.Key = key
	if b := o.boolean("isTranslationEnabled"); b != nil {
		l.IsTranslationEnabled = *b
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	err = s.store.LayoutCreate(r.Context(), &l)
	if derived && errors.Is(err, store.ErrConflict) {
		// A name like the original's: the derived layoutId is made unique.
		l.Key = key + "-" + randomSuffix()
		err = s.store.LayoutCreate(r.Context(), &l)
	}
	if err != nil {
		return layoutConflict(err, l.Key)
	}
	s.writeJSON(w, http.StatusCreated, layoutOut(l))
	return nil
}

// layoutPreviewPlaceholder stands for the e-mail's content in a layout preview.
const layoutPreviewPlaceholder = `<p data-content-placeholder>Dynamic placeholder content</p>`

func (s *Server) layoutPreview(w http.ResponseWriter, r *http.Request) error {
	l, err := s.pathLayout(r)
	if err != nil {
		return err
	}
	o := &object{raw: map[string]json.RawMessage{}, errs: fieldErrors{}}
	if body, _ := r.Context().Value(bodyKey{}).([]byte); len(bytes.TrimSpace(body)) > 0 {
		if o, err = readObject(r); err != nil {
			return err
		}
	}
	values := l.ControlValues
	if v, set := o.jsonObject("controlValues", maxDataBytes+maxLayoutBody); set && v != nil {
		values = v
	}
	example := map[string]any{}
	vars := map[string]any{"subscriber": map[string]any{}}
	if pp := o.sub("previewPayload"); pp != nil {
		if v, set := pp.jsonObject("subscriber", maxDataBytes); set && v != nil {
			var sub map[string]any
			_ = json.Unmarshal(v, &sub)
			example["subscriber"], vars["subscriber"] = sub, sub
		}
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	result := map[string]any{"type": "email"}
	// A layout that does not render answers without a preview, as the
	// established API does.
	if src, _ := engine.LayoutEmailBody(values); src != "" {
		vars[engine.LayoutContentVariable] = layoutPreviewPlaceholder
		// Its translations in the preview subscriber's locale, as a send's.
		var err error
		if l.IsTranslationEnabled {
			sub, _ := vars["subscriber"].(map[string]any)
			locale, _ := sub["locale"].(string)
			var t any
			t, err = engine.Translate(r.Context(), s.sandbox, s.store, callerFrom(r.Context()).Scope, store.TranslationLayout,
				l.Key, locale, src)
			var se *sandbox.Error
			if err != nil && !errors.As(err, &se) {
				return err
			}
			src, _ = t.(string)
		}
		if err == nil {
			if out, err := s.sandbox.Render(src, vars); err == nil {
				result["preview"] = map[string]any{"body": out}
			}
		}
	} else {
		result["preview"] = map[string]any{"body": ""}
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"result": result, "previewPayloadExample": example})
	return nil
}

func (s *Server) layoutUsage(w http.ResponseWriter, r *http.Request) error {
	l, err := s.pathLayout(r)
	if err != nil {
		return err
	}
	uses, err := s.store.LayoutUsage(r.Context(), callerFrom(r.Context()).Scope, l.Key)
	if err != nil {
		return err
	}
	out := make([]map[string]string, 0, len(uses))
	for _, u := range uses {
		out = append(out, map[string]string{"name": u.Name, "workflowId": u.WorkflowKey})
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"workflows": out})
	return nil
}

// checkEmailLayoutID refuses an e-mail step's layoutId that is neither a
// string (a layout's layoutId, at most maxIndexedBytes) nor null.
func checkEmailLayoutID(so *object, values map[string]any) {
	v, ok := values["layoutId"]
	if !ok || v == nil {
		return
	}
	field := so.prefix + "controlValues.layoutId"
	if s, isStr := v.(string); !isStr {
		so.errs.add(field, "must be a string or null", v)
	} else if len(s) > maxIndexedBytes {
		so.errs.add(field, "must be at most 1024 bytes of UTF-8", nil)
	}
}
