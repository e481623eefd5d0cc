package sandbox

import (
	"errors"
	"net/url"
	"sort"
	"strings"
)

// ErrUnsafeURL is a link that is neither an absolute http(s) URL nor a
// relative reference on the app's own origin.
var ErrUnsafeURL = errors.New("must be an http(s) URL or a relative path")

// CheckURL accepts the links Herald puts into messages: absolute http and
// https URLs with a host, and relative references (a path, a query or a
// fragment). It refuses every other scheme (javascript:, data:, vbscript:,
// …), network-path references (//host, which leave the app's origin), and
// control characters, which browsers strip before reading a scheme
// ("java\tscript:"). The empty string — no link — passes.
func CheckURL(s string) error {
	if s == "" {
		return nil
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return ErrUnsafeURL
		}
	}
	if strings.HasPrefix(s, "//") || strings.HasPrefix(s, `\`) || strings.HasPrefix(s, `/\`) {
		return ErrUnsafeURL
	}
	u, err := url.Parse(s)
	if err != nil {
		return ErrUnsafeURL
	}
	switch strings.ToLower(u.Scheme) {
	case "":
		return nil
	case "http", "https":
		if u.Host == "" || strings.Contains(u.Host, `\`) {
			return ErrUnsafeURL
		}
		return nil
	}
	return ErrUnsafeURL
}

// IsURLField reports whether a control (by its dotted path) is a link that
// CheckURL must accept: any control named url (redirect.url,
// primaryAction.redirect.url, …) and the avatar image.
func IsURLField(path string) bool {
	last := path[strings.LastIndexByte(path, '.')+1:]
	return strings.EqualFold(last, "url") || path == "avatar"
}

// Link is a link control found by Links.
type Link struct{ Path, Value string }

// Links returns the string controls of v that are links (IsURLField),
// through nested objects, sorted by path.
func Links(v any) []Link {
	var out []Link
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case string:
			if IsURLField(path) {
				out = append(out, Link{path, t})
			}
		case map[string]any:
			for k, x := range t {
				walk(join(path, k), x)
			}
		}
	}
	walk("", v)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// CheckLinks refuses the first link control of rendered controls that
// CheckURL refuses, naming it.
func CheckLinks(v any) error {
	for _, l := range Links(v) {
		if err := CheckURL(l.Value); err != nil {
			return &Error{Reason: ReasonURL, Field: l.Path, Msg: err.Error()}
		}
	}
	return nil
}
