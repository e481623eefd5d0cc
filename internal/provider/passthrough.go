package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Passthrough is what an override's `_passthrough` adds to a provider's
// HTTP request beyond its body, as Novu's providers take it
// (BaseProvider.transform): headers set on the request and query
// parameters added to its URL. Its `body` is merged into the request body
// with the other overrides (SplitPassthrough).
type Passthrough struct {
	Headers map[string]string
	Query   map[string]string
}

// SplitPassthrough takes `_passthrough` out of a provider's overrides:
// its body is laid over the other overrides as written, its headers and
// query parameters are returned. Values that are not strings are written
// as JSON would show them (numbers, booleans); objects are skipped.
func SplitPassthrough(overrides map[string]any) (map[string]any, Passthrough) {
	pass, ok := overrides["_passthrough"].(map[string]any)
	if !ok {
		if _, present := overrides["_passthrough"]; !present {
			return overrides, Passthrough{}
		}
	}
	out := make(map[string]any, len(overrides))
	for k, v := range overrides {
		if k != "_passthrough" {
			out[k] = v
		}
	}
	if body, ok := pass["body"].(map[string]any); ok {
		out = Merge(out, body)
	}
	return out, Passthrough{Headers: stringValues(pass["headers"]), Query: stringValues(pass["query"])}
}

func stringValues(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		switch x := x.(type) {
		case string:
			out[k] = x
		case float64, bool:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}

type passthroughKey struct{}

// WithPassthrough makes the provider calls made with ctx carry p (Do
// applies it).
func WithPassthrough(ctx context.Context, p Passthrough) context.Context {
	if len(p.Headers) == 0 && len(p.Query) == 0 {
		return ctx
	}
	return context.WithValue(ctx, passthroughKey{}, p)
}

// applyPassthrough adds ctx's passthrough headers and query parameters to
// a request about to be sent. A header that is not a valid field name or
// value is skipped (the request would not be sent at all).
func applyPassthrough(ctx context.Context, u *url.URL, h map[string][]string) {
	p, ok := ctx.Value(passthroughKey{}).(Passthrough)
	if !ok {
		return
	}
	if len(p.Query) > 0 {
		q := u.Query()
		for k, v := range p.Query {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
	}
	for k, v := range p.Headers {
		if validHeader(k, v) {
			h[canonicalHeader(k)] = []string{v}
		}
	}
}

func canonicalHeader(k string) string { return http.CanonicalHeaderKey(k) }

// validHeader reports whether k: v can be sent as a header field: k a
// token (RFC 9110), v without control characters but tab.
func validHeader(k, v string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
