package httpstep

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf16"
)

// FieldError is a control that cannot be used: Field is relative to
// controlValues ("url", "headers.1.key", "method", "timeout",
// "responseBodySchema", "body", "continueOnFailure", "enforceSchemaValidation").
type FieldError struct{ Field, Msg string }

// Error implements error: "<field>: <message>".
func (e FieldError) Error() string { return e.Field + ": " + e.Msg }

// Bounds from Novu's httpRequestControlSchema (packages/shared, control
// schemas of http_request).
const (
	maxURLLength   = 2048
	maxHeaders     = 50
	maxBodyLength  = 65536 // UTF-16 code units, as JavaScript counts
	maxBodyPairs   = 100
	minTimeoutMS   = 100
	maxTimeoutMS   = 30000
	defaultTimeout = 5000
)

// methods are the methods the spec allows. Novu's enum also has HEAD and
// OPTIONS; the spec (workflow-steps.md §3) names these five, so Herald
// accepts only them. Like Novu's enum, the case must be upper.
var methods = []string{"GET", "POST", "PUT", "DELETE", "PATCH"}

// urlPattern is Novu's HTTP_REQUEST_URL_REGEX: a URL starting with a Liquid
// output is checked when rendered; otherwise an absolute http(s) URL that
// may hold {{...}} outputs but no spaces. Herald also lets a URL start with
// a Liquid tag ({% ... %}) and matches the scheme without regard to case
// (URL schemes are case-insensitive; Novu's pattern wants lower case).
var urlPattern = regexp.MustCompile(`^(?:\{\{[^}]*\}\}.*|\{%.*|(?i:https?)://[^\s/$.?#][^\s{}]*(?:\{\{[^}]*\}\}[^\s{}]*)*)$`)

var schemePrefix = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)

// CheckControls validates the stored (unrendered) controls at workflow
// creation: method one of GET POST PUT DELETE PATCH (absent: POST; upper
// case, as Novu's enum), url a required non-empty string whose scheme, when
// the url does not start with a Liquid tag, is http or https (a url like
// "{{payload.url}}" is checked when rendered), headers an array of at most
// 50 {key, value} strings, body a string of at most 65,536 characters or an
// array of at most 100 {key, value} strings, responseBodySchema an object
// that compiles as a draft-07 JSON Schema, enforceSchemaValidation and
// continueOnFailure booleans, timeout a number of milliseconds in
// [100, 30000] (Novu's bounds). A null optional control counts as absent.
// Unknown keys are ignored ("skip" is validated elsewhere). It returns
// every problem, in field order.
func CheckControls(values map[string]any) []FieldError {
	var errs []FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}

	if v := values["method"]; v != nil {
		if s, ok := v.(string); !ok || !isMethod(s) {
			add("method", "must be one of %s", strings.Join(methods, ", "))
		}
	}

	switch s, ok := values["url"].(string); {
	case !ok || strings.TrimSpace(s) == "":
		add("url", "is required: an http or https URL")
	case len(utf16.Encode([]rune(s))) > maxURLLength:
		add("url", "must be at most %d characters", maxURLLength)
	default:
		if msg := checkURLTemplate(s); msg != "" {
			add("url", "%s", msg)
		}
	}

	if v := values["headers"]; v != nil {
		pairs, ok := asPairs(v)
		switch {
		case !ok:
			add("headers", "must be an array of {key, value} objects")
		case len(pairs) > maxHeaders:
			add("headers", "must have at most %d entries", maxHeaders)
		default:
			for i, p := range pairs {
				errs = append(errs, checkPair("headers", i, p)...)
				// A key holding Liquid is checked when rendered.
				if k, _ := p["key"].(string); k != "" && !validHeaderName(k) && !strings.Contains(k, "{{") && !strings.Contains(k, "{%") {
					errs = append(errs, FieldError{Field: fmt.Sprintf("headers.%d.key", i), Msg: "is not a valid HTTP header name"})
				}
			}
		}
	}

	switch v := values["body"].(type) {
	case nil:
	case string:
		if n := len(utf16.Encode([]rune(v))); n > maxBodyLength {
			add("body", "must be at most %d characters (it has %d)", maxBodyLength, n)
		}
	default:
		pairs, ok := asPairs(v)
		switch {
		case !ok:
			add("body", "must be a JSON string or an array of {key, value} objects")
		case len(pairs) > maxBodyPairs:
			add("body", "must have at most %d entries", maxBodyPairs)
		default:
			for i, p := range pairs {
				errs = append(errs, checkPair("body", i, p)...)
			}
		}
	}

	if v := values["responseBodySchema"]; v != nil {
		if m, ok := v.(map[string]any); !ok {
			add("responseBodySchema", "must be a JSON Schema object")
		} else if _, err := compileSchema(m); err != nil {
			add("responseBodySchema", "is not a valid JSON Schema: %s", err)
		}
	}

	for _, k := range []string{"enforceSchemaValidation", "continueOnFailure"} {
		if v := values[k]; v != nil {
			if _, ok := v.(bool); !ok {
				add(k, "must be a boolean")
			}
		}
	}

	if v := values["timeout"]; v != nil {
		if f, ok := number(v); !ok || f < minTimeoutMS || f > maxTimeoutMS {
			add("timeout", "must be a number of milliseconds from %d to %d", minTimeoutMS, maxTimeoutMS)
		}
	}
	return errs
}

func isMethod(s string) bool {
	for _, m := range methods {
		if s == m {
			return true
		}
	}
	return false
}

// checkURLTemplate returns why a stored url cannot be used, or "".
func checkURLTemplate(s string) string {
	if !strings.HasPrefix(s, "{{") && !strings.HasPrefix(s, "{%") {
		if m := schemePrefix.FindStringSubmatch(s); m != nil {
			if sc := strings.ToLower(m[1]); sc != "http" && sc != "https" {
				return fmt.Sprintf("must use http or https, not %q", sc)
			}
		}
	}
	if !urlPattern.MatchString(s) {
		return "must be an absolute http or https URL without spaces, or start with a {{variable}}"
	}
	if !strings.Contains(s, "{{") && !strings.Contains(s, "{%") {
		if u, err := url.Parse(s); err != nil || u.Host == "" {
			return "is not a valid http or https URL"
		}
	}
	return ""
}

// checkPair checks one {key, value} entry of headers or body: both strings,
// nothing else (Novu's keyValuePairSchema has additionalProperties false).
// An empty key is allowed: the entry is dropped when the step runs. (Novu's
// newest schema wants both non-empty; its runtime drops empty keys, and the
// dashboard stores empty rows.)
func checkPair(field string, i int, p map[string]any) []FieldError {
	var errs []FieldError
	at := fmt.Sprintf("%s.%d", field, i)
	for _, k := range []string{"key", "value"} {
		if _, ok := p[k].(string); !ok {
			errs = append(errs, FieldError{Field: at + "." + k, Msg: "must be a string"})
		}
	}
	for k := range p {
		if k != "key" && k != "value" {
			errs = append(errs, FieldError{Field: at, Msg: fmt.Sprintf("has an unknown property %q (only key and value)", k)})
			break
		}
	}
	return errs
}

// asPairs reads an array of objects in the shapes a decoded or hand-built
// control takes.
func asPairs(v any) ([]map[string]any, bool) {
	switch v := v.(type) {
	case []any:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = m
		}
		return out, true
	case []map[string]any:
		return v, true
	case []map[string]string:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			out[i] = make(map[string]any, len(e))
			for k, s := range e {
				out[i][k] = s
			}
		}
		return out, true
	}
	return nil, false
}

// number reads a JSON number in the types a decoded control may hold.
func number(v any) (float64, bool) {
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case int:
		f = float64(v)
	case int32:
		f = float64(v)
	case int64:
		f = float64(v)
	case uint:
		f = float64(v)
	case uint32:
		f = float64(v)
	case uint64:
		f = float64(v)
	case json.Number:
		var err error
		if f, err = v.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
