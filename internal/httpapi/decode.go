package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/store"
)

const (
	// maxString is the longest string attribute a client may send.
	maxString = 1024
	// maxIndexedBytes bounds the strings a store indexes (workflowId, an
	// integration's identifier, e-mail): PostgreSQL cannot index a b-tree
	// row over about 2.7 kB, and 1,024 characters of UTF-8 may take 4 kB.
	maxIndexedBytes = 1024
)

// object is a JSON object body read field by field, collecting every
// offending field so that one 422 can name them all. Unknown fields are ignored.
type object struct {
	prefix string
	raw    map[string]json.RawMessage
	errs   fieldErrors
}

// readObject parses a request body that must be a JSON object.
func readObject(r *http.Request) (*object, error) {
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errorf(http.StatusBadRequest, "A JSON body is required")
	}
	return parseObject(body)
}

func parseObject(body []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errorf(http.StatusBadRequest, "The body is not valid JSON: "+err.Error())
	}
	if dec.More() {
		return nil, errorf(http.StatusBadRequest, "The body is not valid JSON: data after the top-level value")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errorf(http.StatusBadRequest, "The body must be a JSON object")
	}
	o := &object{errs: fieldErrors{}}
	if err := json.Unmarshal(body, &o.raw); err != nil {
		return nil, errorf(http.StatusBadRequest, "The body is not valid JSON")
	}
	return o, nil
}

// sub returns the nested object of field name (nil when absent or null).
func (o *object) sub(name string) *object {
	raw, ok := o.raw[name]
	if !ok || isNull(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		o.fail(name, "must be an object", raw)
		return nil
	}
	return &object{prefix: o.prefix + name + ".", raw: m, errs: o.errs}
}

func (o *object) has(name string) bool { _, ok := o.raw[name]; return ok }

func (o *object) fail(name, message string, raw json.RawMessage) {
	o.errs.add(o.prefix+name, message, rawValue(raw))
}

// rawValue decodes a sent value for an error report.
func rawValue(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return v
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// str reads an optional string or null of at most max characters.
func (o *object) str(name string, max int) store.Field {
	raw, ok := o.raw[name]
	if !ok {
		return store.Field{}
	}
	if isNull(raw) {
		return store.Field{Set: true}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		o.fail(name, "must be a string", raw)
		return store.Field{}
	}
	if utf8.RuneCountInString(s) > max {
		o.fail(name, fmt.Sprintf("must be at most %d characters", max), raw)
		return store.Field{}
	}
	return store.Field{Set: true, Value: &s}
}

// indexed reads an optional string or null that a store indexes: at most
// maxString characters and maxIndexedBytes bytes.
func (o *object) indexed(name string) store.Field {
	f := o.str(name, maxString)
	if f.Value != nil && len(*f.Value) > maxIndexedBytes {
		o.fail(name, fmt.Sprintf("must be at most %d bytes of UTF-8", maxIndexedBytes), o.raw[name])
		return store.Field{}
	}
	return f
}

// text reads an optional string (null counts as absent).
func (o *object) text(name string, max int) string {
	f := o.str(name, max)
	if f.Value == nil {
		return ""
	}
	return *f.Value
}

// requiredText reads a required non-empty string.
func (o *object) requiredText(name string, max int) string {
	raw, ok := o.raw[name]
	if !ok || isNull(raw) {
		o.errs.add(o.prefix+name, "is required", nil)
		return ""
	}
	s := o.text(name, max)
	if s == "" && o.errs[o.prefix+name].Messages == nil {
		o.fail(name, "must not be empty", raw)
	}
	return s
}

// boolean reads an optional boolean (null counts as absent).
func (o *object) boolean(name string) *bool {
	raw, ok := o.raw[name]
	if !ok || isNull(raw) {
		return nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		o.fail(name, "must be a boolean", raw)
		return nil
	}
	return &b
}

// integer reads an optional whole number from lo to hi (null counts as absent).
func (o *object) integer(name string, lo, hi int) *int {
	raw, ok := o.raw[name]
	if !ok || isNull(raw) {
		return nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		o.fail(name, fmt.Sprintf("must be an integer from %d to %d", lo, hi), raw)
		return nil
	}
	n := int(f)
	return &n
}

// jsonObject reads an optional object or null, returned as raw JSON.
func (o *object) jsonObject(name string, maxBytes int) (value json.RawMessage, set bool) {
	raw, ok := o.raw[name]
	if !ok {
		return nil, false
	}
	if isNull(raw) {
		return nil, true
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		o.fail(name, "must be an object", raw)
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		o.fail(name, "must be an object", raw)
		return nil, false
	}
	if buf.Len() > maxBytes {
		o.errs.add(o.prefix+name, fmt.Sprintf("must be at most %d bytes of JSON", maxBytes), nil)
		return nil, false
	}
	return buf.Bytes(), true
}

// strings reads an optional array of strings.
func (o *object) strings(name string, maxItems, maxLen int) ([]string, bool) {
	raw, ok := o.raw[name]
	if !ok || isNull(raw) {
		return nil, false
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		o.fail(name, "must be an array of strings", raw)
		return nil, false
	}
	if len(out) > maxItems {
		o.fail(name, fmt.Sprintf("must have at most %d items", maxItems), raw)
		return nil, false
	}
	for i, s := range out {
		if s == "" || utf8.RuneCountInString(s) > maxLen {
			o.errs.add(o.prefix+name+"."+strconv.Itoa(i), fmt.Sprintf("must be 1 to %d characters", maxLen), s)
			return nil, false
		}
	}
	return out, true
}

// onlyKnown reports every field not in known.
func (o *object) onlyKnown(known ...string) {
	for k, raw := range o.raw {
		found := false
		for _, n := range known {
			if k == n {
				found = true
				break
			}
		}
		if !found {
			o.fail(k, "is not a known field", raw)
		}
	}
}

// oneOf reads an optional string that must be one of values.
func (o *object) oneOf(name string, values ...string) string {
	s := o.text(name, maxString)
	if s == "" {
		if raw, ok := o.raw[name]; ok && !isNull(raw) && o.errs[o.prefix+name].Messages == nil {
			o.fail(name, "must be one of "+fmt.Sprint(values), raw)
		}
		return ""
	}
	for _, v := range values {
		if s == v {
			return s
		}
	}
	o.fail(name, "must be one of "+fmt.Sprint(values), o.raw[name])
	return ""
}

// requiredOneOf is oneOf for a field that must be present and not null.
func (o *object) requiredOneOf(name string, values ...string) string {
	if raw, ok := o.raw[name]; !ok || isNull(raw) {
		o.errs.add(o.prefix+name, "is required", nil)
		return ""
	}
	return o.oneOf(name, values...)
}
