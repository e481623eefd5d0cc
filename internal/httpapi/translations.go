package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/store"
)

// Translations (/v2/translations): one JSON content per workflow or layout
// and locale, resolved by {{t.key}} at rendering (engine.Translate).
// Multipart uploads are in translations_upload.go.

const (
	// maxTranslationBytes bounds one locale's content (compact JSON): a
	// template's source is at most 256 KiB too.
	maxTranslationBytes = 256 << 10
	// maxMasterResources bounds the resources of one master-JSON import.
	maxMasterResources = 1000
)

// localeRE: language_REGION, with an optional script (zh_Hans_CN).
var localeRE = regexp.MustCompile(`^[a-z]{2,3}(_[A-Z][a-z]{3})?_([A-Z]{2}|[0-9]{3})$`)

const localeRule = "must be a locale as language_REGION (en_US, fr_FR, zh_Hans_CN)"

// parseLocale reads a locale, "-" accepted for "_"; ok false when invalid.
func parseLocale(v string) (string, bool) {
	l := engine.NormalizeLocale(v)
	return l, v == strings.TrimSpace(v) && localeRE.MatchString(l)
}

// translationResource is what translations belong to: a workflow or a
// layout, by its client identifier, with its name.
type translationResource struct {
	typ, id, name string
}

// translationResourceFinders find a resource of each type by its client
// identifier or _id (store.ErrNotFound when there is none).
var translationResourceFinders = map[string]func(s *Server, ctx context.Context, scope store.Scope, idOrKey string) (translationResource, error){
	store.TranslationWorkflow: func(s *Server, ctx context.Context, scope store.Scope, idOrKey string) (translationResource, error) {
		w, err := s.store.WorkflowGet(ctx, scope, idOrKey)
		return translationResource{typ: store.TranslationWorkflow, id: w.Key, name: w.Name}, err
	},
	store.TranslationLayout: func(s *Server, ctx context.Context, scope store.Scope, idOrKey string) (translationResource, error) {
		l, err := s.store.LayoutGet(ctx, scope, idOrKey)
		return translationResource{typ: store.TranslationLayout, id: l.Key, name: l.Name}, err
	},
}

var translationTypes = []string{store.TranslationWorkflow, store.TranslationLayout}

// findTranslationResource finds a resource, 404 when there is none.
func (s *Server) findTranslationResource(ctx context.Context, scope store.Scope, typ, idOrKey string) (translationResource, error) {
	find := translationResourceFinders[typ]
	if find == nil || idOrKey == "" || len(idOrKey) > maxIndexedBytes {
		return translationResource{}, resourceNotFound(typ, idOrKey)
	}
	res, err := find(s, ctx, scope, idOrKey)
	if errors.Is(err, store.ErrNotFound) {
		return res, resourceNotFound(typ, idOrKey)
	}
	return res, err
}

func resourceNotFound(typ, id string) error {
	what := "Workflow"
	if typ == store.TranslationLayout {
		what = "Layout"
	}
	return errorf(http.StatusNotFound, what+" "+strconv.Quote(id)+" was not found")
}

// pathTranslation reads {resourceType} and {resourceId} (and {locale}
// when withLocale): a bad one is a 400, as Novu's path pipes answer.
func pathTranslation(r *http.Request, withLocale bool) (typ, id, locale string, err error) {
	typ, id = r.PathValue("resourceType"), r.PathValue("resourceId")
	if typ != store.TranslationWorkflow && typ != store.TranslationLayout {
		return "", "", "", errorf(http.StatusBadRequest, "resourceType must be one of workflow, layout")
	}
	if id == "" || len(id) > maxIndexedBytes {
		return "", "", "", errorf(http.StatusBadRequest, "resourceId must be 1 to 1024 bytes")
	}
	if withLocale {
		l, ok := parseLocale(r.PathValue("locale"))
		if !ok {
			return "", "", "", errorf(http.StatusBadRequest, "locale "+localeRule)
		}
		locale = l
	}
	return typ, id, locale, nil
}

// pathTranslationKey reads the path (pathTranslation) and finds its
// resource in the caller's environment: the key of its translations (of
// its locale when withLocale) and the resource.
func (s *Server) pathTranslationKey(r *http.Request, withLocale bool) (*store.TranslationKey, translationResource, error) {
	typ, id, locale, err := pathTranslation(r, withLocale)
	if err != nil {
		return nil, translationResource{}, err
	}
	scope := callerFrom(r.Context()).Scope
	res, err := s.findTranslationResource(r.Context(), scope, typ, id)
	if err != nil {
		return nil, translationResource{}, err
	}
	return &store.TranslationKey{Scope: scope, ResourceType: typ, ResourceID: res.id, Locale: locale}, res, nil
}

type translationJSON struct {
	ResourceID   string          `json:"resourceId"`
	ResourceType string          `json:"resourceType"`
	Locale       string          `json:"locale"`
	Content      json.RawMessage `json:"content"`
	CreatedAt    string          `json:"createdAt"`
	UpdatedAt    string          `json:"updatedAt"`
}

func translationOut(t store.Translation) translationJSON {
	return translationJSON{ResourceID: t.ResourceID, ResourceType: t.ResourceType, Locale: t.Locale,
		Content: json.RawMessage(t.Content), CreatedAt: formatTime(t.CreatedAt), UpdatedAt: formatTime(t.UpdatedAt)}
}

// translationCreate serves POST /v2/translations: creates or replaces the
// whole content of one locale; 200.
func (s *Server) translationCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	id := o.requiredText("resourceId", maxString)
	if len(id) > maxIndexedBytes {
		o.fail("resourceId", "must be at most 1024 bytes of UTF-8", o.raw["resourceId"])
	}
	typ := o.requiredOneOf("resourceType", translationTypes...)
	locale := o.requiredText("locale", maxString)
	if locale != "" {
		l, ok := parseLocale(locale)
		if !ok {
			o.fail("locale", localeRule, o.raw["locale"])
		}
		locale = l
	}
	content, set := o.jsonObject("content", maxTranslationBytes)
	if (!set || content == nil) && o.errs["content"].Messages == nil {
		o.errs.add("content", "is required: a JSON object", nil)
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	scope := callerFrom(r.Context()).Scope
	res, err := s.findTranslationResource(r.Context(), scope, typ, id)
	if err != nil {
		return err
	}
	t, err := s.store.TranslationUpsert(r.Context(), &store.TranslationUpsertParams{TranslationKey: store.TranslationKey{
		Scope: scope, ResourceType: typ, ResourceID: res.id, Locale: locale}, Content: store.JSON(content), Now: s.now()})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, translationOut(t))
	return nil
}

// translationGet serves GET /v2/translations/{resourceType}/{resourceId}/{locale}.
func (s *Server) translationGet(w http.ResponseWriter, r *http.Request) error {
	key, _, err := s.pathTranslationKey(r, true)
	if err != nil {
		return err
	}
	t, err := s.store.TranslationGet(r.Context(), key)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Translation for locale "+strconv.Quote(key.Locale)+" was not found")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, translationOut(t))
	return nil
}

// translationDelete serves DELETE /v2/translations/{resourceType}/{resourceId}/{locale}
// (that locale) and DELETE /v2/translations/{resourceType}/{resourceId}
// (every locale); 204, 404 when there was none.
func (s *Server) translationDelete(withLocale bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		key, _, err := s.pathTranslationKey(r, withLocale)
		if err != nil {
			return err
		}
		err = s.store.TranslationDelete(r.Context(), key)
		if errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusNotFound, "No translation was found")
		}
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8") // as the workflow delete answers
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

type translationGroupJSON struct {
	ResourceID   string   `json:"resourceId"`
	ResourceType string   `json:"resourceType"`
	ResourceName string   `json:"resourceName"`
	Locales      []string `json:"locales"`
	CreatedAt    string   `json:"createdAt"`
	UpdatedAt    string   `json:"updatedAt"`
}

// translationGroup serves GET /v2/translations/group/{resourceType}/{resourceId}:
// the resource's locales; 404 when it has none.
func (s *Server) translationGroup(w http.ResponseWriter, r *http.Request) error {
	key, res, err := s.pathTranslationKey(r, false)
	if err != nil {
		return err
	}
	list, err := s.store.TranslationLocales(r.Context(), key)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return errorf(http.StatusNotFound, "No translation was found")
	}
	out := translationGroupJSON{ResourceID: res.id, ResourceType: key.ResourceType, ResourceName: res.name, Locales: make([]string, len(list))}
	created, updated := list[0].CreatedAt, list[0].UpdatedAt
	for i, t := range list {
		out.Locales[i] = t.Locale
		if t.CreatedAt.Before(created) {
			created = t.CreatedAt
		}
		if t.UpdatedAt.After(updated) {
			updated = t.UpdatedAt
		}
	}
	out.CreatedAt, out.UpdatedAt = formatTime(created), formatTime(updated)
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// translationMasterGet serves GET /v2/translations/master-json?locale=: every
// resource's content in that locale (default: the organization's default
// locale), by type and identifier.
func (s *Server) translationMasterGet(w http.ResponseWriter, r *http.Request) error {
	scope := callerFrom(r.Context()).Scope
	locale := ""
	if q := r.URL.Query(); q.Get("locale") != "" { // empty: the default
		l, ok := parseLocale(q.Get("locale"))
		if !ok {
			return invalid("locale", localeRule, q.Get("locale"))
		}
		locale = l
	}
	if locale == "" {
		def, err := s.store.TranslationDefaultLocale(r.Context(), scope)
		if err != nil {
			return err
		}
		locale = def
	}
	list, err := s.store.TranslationListLocale(r.Context(), &store.TranslationKey{Scope: scope, Locale: locale})
	if err != nil {
		return err
	}
	out := map[string]map[string]json.RawMessage{"workflows": {}, "layouts": {}}
	for _, t := range list {
		// Only resources that exist: a deleted one's translations are not exported.
		if _, err := s.findTranslationResource(r.Context(), scope, t.ResourceType, t.ResourceID); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.status == http.StatusNotFound {
				continue
			}
			return err
		}
		out[t.ResourceType+"s"][t.ResourceID] = json.RawMessage(t.Content)
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// translationMasterImport serves POST /v2/translations/master-json.
func (s *Server) translationMasterImport(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	locale := o.requiredText("locale", maxString)
	if locale != "" {
		l, ok := parseLocale(locale)
		if !ok {
			o.fail("locale", localeRule, o.raw["locale"])
		}
		locale = l
	}
	master := o.sub("masterJson")
	if master == nil && o.errs["masterJson"].Messages == nil {
		o.errs.add("masterJson", "is required: an object", nil)
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	return s.importMaster(w, r, locale, master.raw)
}

type masterImportJSON struct {
	Success    bool     `json:"success"`
	Message    string   `json:"message"`
	Successful []string `json:"successful,omitempty"`
	Failed     []string `json:"failed,omitempty"`
}

// importMaster replaces the locale of each known resource of a master
// JSON ({workflows: {id: content}, layouts: {id: content}}); unknown ids
// and contents that are not objects fail alone.
func (s *Server) importMaster(w http.ResponseWriter, r *http.Request, locale string, master map[string]json.RawMessage) error {
	scope := callerFrom(r.Context()).Scope
	type item struct {
		typ, id string
		content json.RawMessage
	}
	var items []item
	errs := fieldErrors{}
	for _, typ := range translationTypes {
		raw, ok := master[typ+"s"]
		if !ok || isNull(raw) {
			continue
		}
		var byID map[string]json.RawMessage
		if err := json.Unmarshal(raw, &byID); err != nil {
			errs.add("masterJson."+typ+"s", "must be an object of contents by identifier", rawValue(raw))
			continue
		}
		for _, id := range sortedKeys(byID) {
			items = append(items, item{typ, id, byID[id]})
		}
	}
	if len(items) > maxMasterResources {
		errs.add("masterJson", "must hold at most "+strconv.Itoa(maxMasterResources)+" resources", nil)
	}
	if err := errs.err(); err != nil {
		return err
	}
	out := masterImportJSON{}
	if len(items) == 0 {
		out.Message = "No supported resources found"
		s.writeJSON(w, http.StatusOK, out)
		return nil
	}
	for _, it := range items {
		content, ok := compactObject(it.content)
		if !ok || len(content) > maxTranslationBytes {
			out.Failed = append(out.Failed, it.id)
			continue
		}
		res, err := s.findTranslationResource(r.Context(), scope, it.typ, it.id)
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusNotFound {
			out.Failed = append(out.Failed, it.id)
			continue
		}
		if err != nil {
			return err
		}
		if _, err := s.store.TranslationUpsert(r.Context(), &store.TranslationUpsertParams{TranslationKey: store.TranslationKey{
			Scope: scope, ResourceType: it.typ, ResourceID: res.id, Locale: locale}, Content: content, Now: s.now()}); err != nil {
			return err
		}
		out.Successful = append(out.Successful, it.id)
	}
	switch {
	case len(out.Successful) == 0:
		out.Message = "Failed to import any resources"
	case len(out.Failed) > 0:
		out.Success = true
		out.Message = "Partial import completed: " + strconv.Itoa(len(out.Successful)) + " resources imported, " +
			strconv.Itoa(len(out.Failed)) + " failed"
	default:
		out.Success = true
		out.Message = "Successfully imported translations for " + strconv.Itoa(len(out.Successful)) + " resources"
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// compactObject returns raw compacted when it is a JSON object.
func compactObject(raw json.RawMessage) (store.JSON, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, false
	}
	return store.JSON(buf.Bytes()), true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
