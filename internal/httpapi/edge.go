package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/internal/textcheck"
)

// The edge: a request's text is checked once, before authentication or any
// store call, so that no handler sees a value one store would keep and the
// other refuse (docs/api-behaviour.md, "Text and numbers at the edge").

const (
	// maxJSONDepth is the deepest nesting of a body, its own object included.
	maxJSONDepth = 64
	// maxQueryValue bounds every query value, in bytes.
	maxQueryValue = 16 << 10
	// maxRequestID bounds a client's X-Request-Id.
	maxRequestID = 64
)

// freeForm are the body fields holding the client's own JSON (subscriber
// `data`, trigger `payload` and `overrides`, step `controlValues`, …): a
// problem inside one is reported under the field's name, as the handlers
// name these fields.
var freeForm = map[string]bool{
	"data": true, "payload": true, "overrides": true, "controlValues": true,
	"preferences": true, "payloadSchema": true, "tlsOptions": true,
}

// checkEdge refuses, with one 422 naming every offending field, path
// parameters and query keys or values that are not UTF-8 or hold NUL, query
// values over maxQueryValue bytes, and a JSON body with such strings, lone
// surrogate escapes, numbers beyond a float64 or nesting beyond maxJSONDepth.
// A body that is not JSON is left to the handler (a 400 where one is read).
func checkEdge(r *http.Request) error {
	if r.Pattern == "" {
		return nil // no route: the 404 or 405 says more
	}
	errs := fieldErrors{}
	for _, name := range wildcards(r.Pattern) {
		v := r.PathValue(name)
		if err := textcheck.Text(v); err != nil {
			errs.add(name, err.Error(), v)
		}
	}
	for k, vs := range r.URL.Query() {
		if err := textcheck.Text(k); err != nil {
			errs.add(k, "is a query parameter name that "+err.Error(), k)
			continue
		}
		for _, v := range vs {
			if err := textcheck.Text(v); err != nil {
				errs.add(k, err.Error(), v)
				break
			}
			if len(v) > maxQueryValue {
				errs.add(k, fmt.Sprintf("must be at most %d bytes", maxQueryValue), nil)
				break
			}
		}
	}
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if len(bytes.TrimSpace(body)) > 0 {
		problems, err := textcheck.JSON(body, maxJSONDepth)
		if err == nil {
			for _, p := range problems {
				if p.Err == textcheck.ErrDepth {
					// Named by its top-level member: the path itself is 64 levels long.
					field := "body"
					if body := bytes.TrimSpace(body); body[0] == '{' && len(p.Path) > 0 {
						field = p.Path[0]
					}
					errs.add(field, fmt.Sprintf("makes the body nest deeper than %d levels", maxJSONDepth), nil)
					continue
				}
				errs.add(bodyField(p.Path), p.Err.Error(), p.Value)
			}
		}
	}
	return errs.err()
}

// bodyField names the field of a problem: its path, up to a free-form field.
func bodyField(path []string) string {
	if len(path) == 0 {
		return "body"
	}
	for i, seg := range path {
		if freeForm[seg] {
			path = path[:i+1]
			break
		}
	}
	return strings.Join(path, ".")
}

// wildcards returns the names of a route pattern's wildcards.
func wildcards(pattern string) []string {
	var names []string
	for {
		open := strings.IndexByte(pattern, '{')
		if open < 0 {
			return names
		}
		end := strings.IndexByte(pattern[open:], '}')
		if end < 0 {
			return names
		}
		if name := strings.TrimSuffix(pattern[open+1:open+end], "..."); name != "$" {
			names = append(names, name)
		}
		pattern = pattern[open+end+1:]
	}
}

// validRequestID accepts a client's X-Request-Id for echoing and logging:
// 1 to 64 visible ASCII characters. Anything else is replaced by a new id.
func validRequestID(v string) bool {
	if v == "" || len(v) > maxRequestID {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] > '~' {
			return false
		}
	}
	return true
}
