package provider

import (
	"strings"
	"unicode"
)

// Casing is how a provider's API spells the keys of its requests. Novu
// Framework apps write provider overrides in camelCase (Novu's
// BaseProvider.casing transform); Herald turns their keys into the casing of
// the request it sends the provider.
type Casing string

// The casings of provider APIs.
const (
	CasingCamel  Casing = "" // camelCase, as written: nothing to turn
	CasingSnake  Casing = "snake_case"
	CasingPascal Casing = "PascalCase"
)

// Recase turns the keys of an override object, at every depth, into the
// casing (Novu's casingTransform over change-case).
func (c Casing) Recase(v map[string]any) map[string]any {
	if c == CasingCamel {
		return v
	}
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[c.key(k)] = c.value(x)
	}
	return out
}

func (c Casing) value(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return c.Recase(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.value(e)
		}
		return out
	}
	return v
}

// key spells one key: its words (split where the case changes, at
// underscores, hyphens and spaces) joined as the casing joins them.
func (c Casing) key(k string) string {
	words := splitWords(k)
	if len(words) == 0 {
		return k
	}
	switch c {
	case CasingSnake:
		return strings.ToLower(strings.Join(words, "_"))
	case CasingPascal:
		var b strings.Builder
		for _, w := range words {
			r := []rune(strings.ToLower(w))
			r[0] = unicode.ToUpper(r[0])
			b.WriteString(string(r))
		}
		return b.String()
	}
	return k
}

// splitWords splits a key into words as change-case does: at separators,
// between a lower-case letter or digit and an upper-case one, and before
// the last upper-case letter of a run followed by a lower-case one
// ("HTMLBody" → HTML, Body).
func splitWords(k string) []string {
	var words []string
	var cur []rune
	rs := []rune(k)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == ' ' || r == '.':
			flush()
			continue
		case unicode.IsUpper(r) && i > 0:
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}
