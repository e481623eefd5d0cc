package httpstep

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/jsvalue"
	"github.com/herald-notify/herald/internal/secret"
)

// signatureHeader is the header that carries the request's HMAC.
const signatureHeader = "novu-signature"

// userAgent is sent unless the step sets one.
const userAgent = "Herald-HTTP-Request-Step/1.0"

// build turns a step's rendered controls into the request to send, the
// exact body bytes it carries (nil when none) and, when the controls cannot
// be sent, the failure to report instead.
func build(r Request) (*http.Request, []byte, string) {
	c := r.Controls
	method := "POST"
	if v := c["method"]; v != nil {
		s, _ := v.(string)
		if !isMethod(s) {
			return nil, nil, fmt.Sprintf("The method %s is not one of %s", quoteShort(v), strings.Join(methods, ", "))
		}
		method = s
	}

	u, fail := targetURL(c["url"])
	if fail != "" {
		return nil, nil, fail
	}

	h, host, fail := headers(c["headers"])
	if fail != "" {
		return nil, nil, fail
	}

	// As Novu, the body is resolved (and a bad one fails the step) before
	// the method decides whether it is sent.
	body, fail := resolveBody(c["body"])
	if fail != "" {
		return nil, nil, fail
	}
	var sent []byte
	if body != nil && method != "GET" && method != "DELETE" {
		sent = jsvalue.Stringify(body)
	}

	var req *http.Request
	var err error
	if sent != nil {
		req, err = http.NewRequest(method, u.String(), bytes.NewReader(sent))
	} else {
		req, err = http.NewRequest(method, u.String(), nil)
	}
	if err != nil {
		return nil, nil, fmt.Sprintf("The URL %s cannot be requested: %v", shown(u), err)
	}
	req.Header = h
	if host != "" {
		req.Host = host
	}
	// The step's own Content-Type wins, as with Novu (got's json option).
	if sent != nil && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	if h.Get("Accept") == "" {
		h.Set("Accept", "*/*")
	}
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", userAgent)
	}
	if r.SigningKey != "" {
		now := r.Now
		if now.IsZero() {
			now = time.Now()
		}
		signed := sent
		if signed == nil {
			signed = []byte("{}") // Novu signs {} when no body is sent
		}
		h.Set(signatureHeader, secret.NovuSignature(r.SigningKey, now, signed))
	}
	return req, sent, ""
}

// targetURL checks the rendered url: an absolute http or https URL with a
// host and no credentials (Novu's assertSafeOutboundUrl). Where it may go is
// the dialer's to decide, at every connection.
func targetURL(v any) (*url.URL, string) {
	s, _ := v.(string)
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, "The HTTP request step has no URL"
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Sprintf("The URL %s is not a valid URL", quoteShort(s))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Sprintf("The URL %s is not http or https", quoteShort(s))
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Sprintf("The URL %s has no host", quoteShort(s))
	}
	if u.User != nil {
		return nil, fmt.Sprintf("The URL %s carries credentials, which are not allowed", shown(u))
	}
	return u, ""
}

// headers makes the step's headers: an empty key is dropped, a later key
// replaces an earlier one (a JavaScript record), a Host header sets the
// request's host.
func headers(v any) (http.Header, string, string) {
	h := http.Header{}
	if v == nil {
		return h, "", ""
	}
	pairs, ok := asPairs(v)
	if !ok {
		return nil, "", "The headers are not a list of {key, value} pairs"
	}
	host := ""
	for _, p := range pairs {
		k, _ := p["key"].(string)
		if k == "" {
			continue
		}
		val, ok := p["value"].(string)
		if !ok && p["value"] != nil {
			return nil, "", fmt.Sprintf("The value of header %s is not a string", quoteShort(k))
		}
		if !validHeaderName(k) {
			return nil, "", fmt.Sprintf("The header name %s is not a valid HTTP header name", quoteShort(k))
		}
		if !validHeaderValue(val) {
			// The value is not shown: it may be a secret.
			return nil, "", fmt.Sprintf("The value of header %s holds a line break or another control character", k)
		}
		if strings.EqualFold(k, "Host") {
			host = val
			continue
		}
		h.Set(k, val)
	}
	return h, host, ""
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s can be sent as a field value: no
// control characters other than tab, and valid UTF-8.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(s)
}

// resolveBody is Novu's resolveHttpRequestBody: a string is parsed as JSON
// (blank: no body) and must be an object or array; key-value pairs make an
// object of strings without the empty keys (no pairs: no body).
func resolveBody(v any) (any, string) {
	switch b := v.(type) {
	case nil:
		return nil, ""
	case string:
		if strings.TrimFunc(b, isJSSpace) == "" {
			return nil, ""
		}
		parsed, err := jsvalue.ParseJSON(b)
		if err != nil {
			return nil, "The body is not a JSON object or array: " + brief(err.Error())
		}
		switch parsed.(type) {
		case *jsvalue.Object, []any:
			return parsed, ""
		}
		return nil, "The body is not a JSON object or array: it is " + jsType(parsed)
	}
	pairs, ok := asPairs(v)
	if !ok {
		return nil, "The body is not a JSON object or array: it is neither a JSON string nor {key, value} pairs"
	}
	if len(pairs) == 0 {
		return nil, ""
	}
	obj := jsvalue.NewObject()
	for _, p := range pairs {
		k, _ := p["key"].(string)
		if k == "" {
			continue
		}
		val, ok := p["value"].(string)
		if !ok && p["value"] != nil {
			return nil, fmt.Sprintf("The body's value for %s is not a string", quoteShort(k))
		}
		obj.Set(k, val)
	}
	return obj, ""
}

// isJSSpace reports whether String.prototype.trim removes r.
func isJSSpace(r rune) bool { return (unicode.IsSpace(r) && r != 0x85) || r == 0xfeff }

func jsType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	}
	return "not an object"
}

// shown is a URL as failures name it: without credentials, bounded.
func shown(u *url.URL) string { return truncate(u.Redacted(), 300) }

// quoteShort quotes a value for a failure message, bounded.
func quoteShort(v any) string {
	s, ok := v.(string)
	if !ok {
		return truncate(fmt.Sprintf("%v", v), 200)
	}
	return strconv.Quote(truncate(s, 200))
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
