package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/store"
)

// Contexts (/v2/contexts): typed entities of an environment that triggers
// name and templates read as context.<type>.

var contextPartRE = regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*$`)

const (
	contextPartRule = "must be 1 to 100 lowercase letters and digits, with . _ or - between them"
	maxContextPart  = 100
	// maxContextData bounds a context's data (64 KB, as the established service).
	maxContextData = 64 << 10
	// maxTriggerContexts bounds the contexts of one trigger.
	maxTriggerContexts = 5
)

func validContextPart(s string) bool { return len(s) <= maxContextPart && contextPartRE.MatchString(s) }

type contextJSON struct {
	Type      string     `json:"type"`
	ID        string     `json:"id"`
	Data      store.JSON `json:"data"`
	CreatedAt string     `json:"createdAt"`
	UpdatedAt string     `json:"updatedAt"`
}

func contextOut(c store.Context) contextJSON {
	data := c.Data
	if len(data) == 0 {
		data = store.JSON(`{}`)
	}
	return contextJSON{Type: c.Type, ID: c.ContextID, Data: data, CreatedAt: formatTime(c.CreatedAt), UpdatedAt: formatTime(c.UpdatedAt)}
}

func contextNotFound(err error, typ, cid string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Context with type '"+typ+"' and id '"+cid+"' was not found")
	}
	return err
}

// pathContext is the {type}/{id} of the path; one that cannot exist is a 404.
func pathContext(r *http.Request) (string, string, error) {
	typ, cid := r.PathValue("type"), r.PathValue("id")
	if !validContextPart(typ) || !validContextPart(cid) {
		return "", "", contextNotFound(store.ErrNotFound, typ, cid)
	}
	return typ, cid, nil
}

// contextCreate serves POST /v2/contexts (201; an existing type:id is a 409).
func (s *Server) contextCreate(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(r)
	if err != nil {
		return err
	}
	ref := store.ContextRef{Type: o.requiredText("type", maxString), ContextID: o.requiredText("id", maxString)}
	for _, f := range []struct{ name, v string }{{"type", ref.Type}, {"id", ref.ContextID}} {
		if f.v != "" && !validContextPart(f.v) {
			o.fail(f.name, contextPartRule, o.raw[f.name])
		}
	}
	data, _ := o.jsonObject("data", maxContextData)
	ref.Data = store.JSON(data)
	if err := o.errs.err(); err != nil {
		return err
	}
	c, err := s.store.ContextCreate(r.Context(), &store.ContextCreateParams{Scope: callerFrom(r.Context()).Scope, ContextRef: ref,
		Now: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Context with type '"+ref.Type+"' and id '"+ref.ContextID+"' already exists")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, contextOut(c))
	return nil
}

// contextList serves GET /v2/contexts: cursor pages in creation order.
func (s *Server) contextList(w http.ResponseWriter, r *http.Request) error {
	errs := fieldErrors{}
	p := store.ContextListParams{Scope: callerFrom(r.Context()).Scope, TopicPage: readTopicPage(r, errs)}
	q := r.URL.Query()
	switch v := q.Get("orderBy"); v {
	case "", "createdAt":
	default:
		errs.add("orderBy", "must be createdAt", v)
	}
	if v := q.Get("includeCursor"); v != "" && v != "true" && v != "false" {
		errs.add("includeCursor", "must be true or false", v)
	}
	p.Type, p.ContextID = q.Get("type"), q.Get("id")
	for _, f := range []struct{ name, v string }{{"type", p.Type}, {"id", p.ContextID}} {
		if f.v != "" && !validContextPart(f.v) {
			errs.add(f.name, contextPartRule, f.v)
		}
	}
	// Keys are lowercase: a case-insensitive search is a search in lowercase.
	p.Search = strings.ToLower(q.Get("search"))
	if utf8.RuneCountInString(p.Search) > 2*maxContextPart+1 {
		errs.add("search", "must be at most 201 characters", p.Search)
	}
	if err := errs.err(); err != nil {
		return err
	}
	if q.Get("includeCursor") == "true" && (p.After != "" || p.Before != "") {
		p.TopicPage = includeCursor(p.TopicPage)
	}
	list, more, total, err := s.store.ContextList(r.Context(), &p)
	if err != nil {
		return err
	}
	data := make([]contextJSON, 0, len(list))
	first, last := "", ""
	for i, c := range list {
		data = append(data, contextOut(c))
		if i == 0 {
			first = c.ID
		}
		last = c.ID
	}
	next, previous := cursors(p.TopicPage, more, first, last)
	s.writeJSON(w, http.StatusOK, map[string]any{"data": data, "next": next, "previous": previous, "totalCount": total,
		"totalCountCapped": total >= store.TotalCountCap})
	return nil
}

// includeCursor moves a page's cursor to its neighbour in the space of
// 24-hex ids (one less or one more as a number), so that the page, read
// strictly beyond the moved cursor, starts with the cursor's own item: no
// id lies between two neighbours.
func includeCursor(p store.TopicPage) store.TopicPage {
	step := func(c string, up bool) string {
		b := []byte(c)
		for i := len(b) - 1; i >= 0; i-- {
			if up && b[i] != 'f' {
				b[i] = nextHex(b[i], 1)
				return string(b)
			}
			if !up && b[i] != '0' {
				b[i] = nextHex(b[i], -1)
				return string(b)
			}
			if up {
				b[i] = '0'
			} else {
				b[i] = 'f'
			}
		}
		return c
	}
	// After (ascending) reads ids > cursor: start from cursor-1. After
	// (descending) reads ids < cursor: start from cursor+1. Before mirrors.
	up := (p.After != "" && p.Descending) || (p.Before != "" && !p.Descending)
	if p.After != "" {
		p.After = step(p.After, up)
	} else {
		p.Before = step(p.Before, up)
	}
	return p
}

func nextHex(c byte, d int) byte {
	const digits = "0123456789abcdef"
	return digits[strings.IndexByte(digits, c)+d]
}

func (s *Server) contextGet(w http.ResponseWriter, r *http.Request) error {
	typ, cid, err := pathContext(r)
	if err != nil {
		return err
	}
	c, err := s.store.ContextGet(r.Context(), callerFrom(r.Context()).Scope, typ, cid)
	if err != nil {
		return contextNotFound(err, typ, cid)
	}
	s.writeJSON(w, http.StatusOK, contextOut(c))
	return nil
}

// contextPatch serves PATCH /v2/contexts/{type}/{id} {data}: data replaced.
func (s *Server) contextPatch(w http.ResponseWriter, r *http.Request) error {
	typ, cid, err := pathContext(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	data, set := o.jsonObject("data", maxContextData)
	if !set || data == nil {
		if o.errs[o.prefix+"data"].Messages == nil {
			o.errs.add("data", "is required and must be an object", rawValue(o.raw["data"]))
		}
	}
	if err := o.errs.err(); err != nil {
		return err
	}
	c, err := s.store.ContextUpdate(r.Context(), &store.ContextUpdateParams{Scope: callerFrom(r.Context()).Scope,
		ContextRef: store.ContextRef{Type: typ, ContextID: cid, Data: store.JSON(data)}, Now: s.now()})
	if err != nil {
		return contextNotFound(err, typ, cid)
	}
	s.writeJSON(w, http.StatusOK, contextOut(c))
	return nil
}

func (s *Server) contextDelete(w http.ResponseWriter, r *http.Request) error {
	typ, cid, err := pathContext(r)
	if err != nil {
		return err
	}
	if err := s.store.ContextDelete(r.Context(), callerFrom(r.Context()).Scope, typ, cid); err != nil {
		return contextNotFound(err, typ, cid)
	}
	writeNoContent(w)
	return nil
}

// readTriggerContexts reads a trigger's `context`: {<type>: "<id>" | {id,
// data?}}, at most five, in type order.
func readTriggerContexts(o *object) []store.ContextRef {
	raw, ok := o.raw["context"]
	if !ok || isNull(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		o.fail("context", `must be an object {type: id} or {type: {id, data}}`, raw)
		return nil
	}
	if len(m) > maxTriggerContexts {
		o.fail("context", "must name at most "+strconv.Itoa(maxTriggerContexts)+" contexts", raw)
		return nil
	}
	var out []store.ContextRef
	for _, typ := range slices.Sorted(maps.Keys(m)) {
		v, name := m[typ], "context."+typ
		if !validContextPart(typ) {
			o.fail(name, "names a type that "+contextPartRule, v)
			continue
		}
		ref := store.ContextRef{Type: typ}
		if json.Unmarshal(v, &ref.ContextID) != nil {
			co, err := parseObject(v)
			if err != nil {
				o.fail(name, `must be an id or {id, data}`, v)
				continue
			}
			co.prefix, co.errs = o.prefix+name+".", o.errs
			before := len(o.errs)
			ref.ContextID = co.requiredText("id", maxString)
			data, _ := co.jsonObject("data", maxContextData)
			ref.Data = store.JSON(data)
			if len(o.errs) != before {
				continue
			}
		}
		if !validContextPart(ref.ContextID) {
			o.fail(name, "names an id that "+contextPartRule, v)
			continue
		}
		out = append(out, ref)
	}
	return out
}

// resolveContexts gets or creates a trigger's contexts and returns them as
// its notifications keep them: {type: {id, data}} and the sorted keys.
func (s *Server) resolveContexts(r *http.Request, scope store.Scope, refs []store.ContextRef) (store.JSON, string, error) {
	if len(refs) == 0 {
		return nil, "", nil
	}
	cs, err := s.store.ContextResolve(r.Context(), &store.ContextResolveParams{Scope: scope, Refs: refs, Now: s.now()})
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	keys := make([]string, 0, len(cs))
	buf.WriteByte('{')
	for i, c := range cs { // in type order, as refs
		if i > 0 {
			buf.WriteByte(',')
		}
		data := c.Data
		if len(data) == 0 {
			data = store.JSON(`{}`)
		}
		// Types and ids are letters, digits and . _ - : nothing to escape.
		buf.WriteString(`"` + c.Type + `":{"id":"` + c.ContextID + `","data":` + string(data) + `}`)
		keys = append(keys, c.Key())
	}
	buf.WriteByte('}')
	slices.Sort(keys)
	return buf.Bytes(), strings.Join(keys, ","), nil
}

// readContextKeys reads the contextKeys of a list: "type:id" values,
// repeated (a lone empty value is the empty set: notifications triggered
// without context), as the form notifications keep them in.
func readContextKeys(name string, vs []string, errs fieldErrors) *string {
	var keys []string
	for _, v := range vs {
		if v == "" && len(vs) == 1 {
			break
		}
		typ, cid, ok := strings.Cut(v, ":")
		if !ok || !validContextPart(typ) || !validContextPart(cid) {
			errs.add(name, "must be type:id keys, each part "+contextPartRule, v)
			return nil
		}
		if !slices.Contains(keys, v) {
			keys = append(keys, v)
		}
	}
	slices.Sort(keys)
	out := strings.Join(keys, ",")
	return &out
}

// sessionContextKeys reads an inbox session's `context` (as a trigger's)
// into the keys that narrow the session (nil: none or empty). The session
// does not create the contexts, and no contextHash is required: the
// context only narrows what the session's own subscriber sees.
func sessionContextKeys(o *object) *string {
	refs := readTriggerContexts(o)
	if len(refs) == 0 {
		return nil
	}
	keys := make([]string, len(refs))
	for i, ref := range refs {
		keys[i] = ref.Type + ":" + ref.ContextID
	}
	slices.Sort(keys)
	out := strings.Join(keys, ",")
	return &out
}

// withSessionContext narrows f to an inbox session's context, unless the
// request names contextKeys itself.
func withSessionContext(r *http.Request, f *store.InboxFilter) {
	if c := callerFrom(r.Context()); c.ContextKeys != nil && f.ContextKeys == nil {
		f.ContextKeys = c.ContextKeys
	}
}
