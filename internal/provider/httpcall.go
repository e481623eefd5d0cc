package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxAnswer bounds how much of a provider's answer is read.
const maxAnswer = 1 << 20

// maxRaw bounds the raw answer kept in an execution detail.
const maxRaw = 4 << 10

// BaseURL returns the origin calls go to: credentials.baseUrl when set (it
// replaces scheme, host, port and may add a path prefix), else def. It has
// no trailing slash.
func BaseURL(c Credentials, def string) (string, error) {
	s := c.String("baseUrl")
	if s == "" {
		s = def
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", Permanentf("credentials.baseUrl %q is not an http(s) URL", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// Request is one HTTP call to a provider.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Secrets are redacted from the raw answer (the credentials' secrets
	// and any token the call carries).
	Secrets []string
}

// JSONRequest is a POST of v as JSON.
func JSONRequest(u string, v any, secrets []string) (*Request, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, Permanentf("encoding the request: %v", err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	return &Request{Method: http.MethodPost, URL: u, Header: h, Body: b, Secrets: secrets}, nil
}

// FormRequest is a POST of form values, urlencoded.
func FormRequest(u string, form url.Values, secrets []string) *Request {
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("Accept", "application/json")
	return &Request{Method: http.MethodPost, URL: u, Header: h, Body: []byte(form.Encode()), Secrets: secrets}
}

// Response is a provider's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Raw is the body (status first) with secrets redacted, bounded in size.
	Raw string
}

// OK reports a 2xx status.
func (r *Response) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Do makes the call. A network failure or timeout is a transient *Error; a
// call refused by the network guard a permanent one. Any HTTP status is a
// Response: the provider decides what it means (see StatusError).
func Do(ctx context.Context, client *http.Client, r *Request) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, Permanentf("building the request: %v", err)
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	applyPassthrough(ctx, req.URL, req.Header)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "Herald")
	}
	resp, err := client.Do(req)
	if err != nil {
		pe := AsError(err)
		pe.Reason = Redact(pe.Reason, r.Secrets)
		return nil, pe
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		pe := AsError(err)
		pe.Reason = Redact(pe.Reason, r.Secrets)
		return nil, pe
	}
	raw := string(body)
	if len(raw) > maxRaw {
		raw = raw[:maxRaw] + "…"
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Raw: Redact(raw, r.Secrets)}, nil
}

// StatusError classifies a non-2xx answer: 408, 429 and 5xx are transient
// (honouring Retry-After), every other status permanent. reason is the
// provider's own message when the caller found one.
func StatusError(r *Response, reason string) *Error {
	if reason == "" {
		reason = http.StatusText(r.Status)
	}
	e := &Error{Class: Permanent, Status: r.Status, Reason: reason, Raw: r.Raw}
	if r.Status == http.StatusRequestTimeout || r.Status == http.StatusTooManyRequests || r.Status >= 500 {
		e.Class = Transient
		e.RetryAfter = RetryAfter(r.Header, time.Now())
	}
	return e
}

// RetryAfter reads a Retry-After header (seconds or an HTTP date); 0 when absent.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(min(s, 86400) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}

// Redact replaces every secret in s.
func Redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// Merge merges overrides into body, recursively for objects: the trigger's
// overrides.providers.<providerId> on top of the request Herald built.
func Merge(body, overrides map[string]any) map[string]any {
	for k, v := range overrides {
		if sub, ok := v.(map[string]any); ok {
			if cur, ok := body[k].(map[string]any); ok {
				body[k] = Merge(cur, sub)
				continue
			}
		}
		body[k] = v
	}
	return body
}

// Path returns a dotted path's value in a decoded JSON answer ("" when absent).
func Path(body []byte, path string) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	for _, p := range strings.Split(path, ".") {
		switch cur := v.(type) {
		case map[string]any:
			v = cur[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(cur) {
				return ""
			}
			v = cur[i]
		default:
			return ""
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// BasicAuth is the credentials part of an HTTP Basic Authorization header.
func BasicAuth(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

// Address formats "Name <addr>", or addr alone when name is empty.
func Address(name, addr string) string {
	if name == "" {
		return addr
	}
	return (&mail.Address{Name: name, Address: addr}).String()
}
