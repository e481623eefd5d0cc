package sandbox

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/herald-notify/herald/internal/liquid"
)

// ReasonTranslation: a {{t.key}} names a key found in no translation.
const ReasonTranslation = "translation"

// translationRE matches {{t.key}} (spaces and Liquid's whitespace control
// allowed): the key runs to the closing braces and holds no space, brace or
// filter. `{{ t.key | upcase }}` is Liquid, not a translation placeholder.
var translationRE = regexp.MustCompile(`\{\{-?\s*t\.([^\s{}|]+?)\s*-?\}\}`)

// HasTranslations reports whether any string of values holds a {{t.key}}:
// values without one need no translation read.
func HasTranslations(values any) bool {
	found := false
	walkStrings(values, func(s string) {
		if !found && strings.Contains(s, "t.") && translationRE.MatchString(s) {
			found = true
		}
	})
	return found
}

func walkStrings(v any, fn func(string)) {
	switch t := v.(type) {
	case string:
		fn(t)
	case map[string]any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	case *liquid.Map:
		for _, k := range t.Keys() {
			x, _ := t.Get(k)
			walkStrings(x, fn)
		}
	case []any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	}
}

// Translate returns a copy of values (a step's or a layout's controls, as
// Controls takes them, or one template) with every {{t.key}} replaced by
// the text lookup gives for the key. It runs before the Liquid render, so a
// translation may hold Liquid; the text inserted is never scanned again. A
// key lookup does not find fails with ReasonTranslation. The text made is
// bounded as a render's output is: each string at MaxSource bytes (it is a
// template's source next) and all of them together at MaxTotal.
func (s *Sandbox) Translate(values any, lookup func(key string) (string, bool)) (any, error) {
	tr := translator{s: s, lookup: lookup}
	out := tr.value("", values)
	if tr.err != nil {
		return nil, tr.err
	}
	return out, nil
}

type translator struct {
	s      *Sandbox
	lookup func(string) (string, bool)
	total  int
	err    *Error
}

func (tr *translator) value(path string, v any) any {
	if tr.err != nil {
		return v
	}
	switch t := v.(type) {
	case string:
		return tr.text(path, t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = tr.value(join(path, k), x)
		}
		return out
	case *liquid.Map:
		out := liquid.NewMap(t.Len())
		for _, k := range t.Keys() {
			x, _ := t.Get(k)
			out.Set(k, tr.value(join(path, k), x))
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = tr.value(join(path, fmt.Sprint(i)), x)
		}
		return out
	}
	return v
}

func (tr *translator) text(path, src string) string {
	if !strings.Contains(src, "t.") {
		tr.total += len(src)
		return src
	}
	locs := translationRE.FindAllStringSubmatchIndex(src, -1)
	if len(locs) == 0 {
		tr.total += len(src)
		return src
	}
	var b strings.Builder
	last := 0
	for _, m := range locs {
		key := src[m[2]:m[3]]
		text, ok := tr.lookup(key)
		if !ok {
			tr.err = &Error{Reason: ReasonTranslation, Field: path, Msg: fmt.Sprintf("no translation has the key %q", trimKey(key))}
			return src
		}
		b.WriteString(src[last:m[0]])
		b.WriteString(text)
		last = m[1]
		if b.Len() > tr.s.limits.MaxSource || tr.total+b.Len() > tr.s.limits.MaxTotal {
			tr.err = &Error{Reason: ReasonOutput, Field: path, Msg: fmt.Sprintf(
				"the translated text is longer than %d bytes", min(tr.s.limits.MaxSource, tr.s.limits.MaxTotal))}
			return src
		}
	}
	b.WriteString(src[last:])
	if b.Len() > tr.s.limits.MaxSource || tr.total+b.Len() > tr.s.limits.MaxTotal {
		tr.err = &Error{Reason: ReasonOutput, Field: path, Msg: fmt.Sprintf(
			"the translated text is longer than %d bytes", min(tr.s.limits.MaxSource, tr.s.limits.MaxTotal))}
		return src
	}
	tr.total += b.Len()
	return b.String()
}

// trimKey bounds a key quoted in an error.
func trimKey(k string) string {
	if len(k) > 100 {
		return strings.ToValidUTF8(k[:100], "") + "…"
	}
	return k
}
