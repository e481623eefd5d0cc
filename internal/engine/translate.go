package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// TranslationReader reads what {{t.key}} resolves against (store.Translations).
type TranslationReader interface {
	TranslationSetFor(ctx context.Context, k *store.TranslationKey) (store.TranslationSet, error)
}

// memoTranslations reads each translation set once for the life of the
// reader it returns (one planning of a trigger group: its recipients share
// their workflow's sets, a set per locale); nil stays nil.
func memoTranslations(r TranslationReader) TranslationReader {
	if r == nil {
		return nil
	}
	return &translationMemo{r: r, got: map[store.TranslationKey]store.TranslationSet{}}
}

type translationMemo struct {
	r   TranslationReader
	got map[store.TranslationKey]store.TranslationSet
}

func (m *translationMemo) TranslationSetFor(ctx context.Context, k *store.TranslationKey) (store.TranslationSet, error) {
	if set, ok := m.got[*k]; ok {
		return set, nil
	}
	set, err := m.r.TranslationSetFor(ctx, k)
	if err == nil {
		m.got[*k] = set
	}
	return set, err
}

// translationsUnread is the failure of a step whose translations could
// not be read (the trigger planner leaves such a step to the workers).
const translationsUnread = "The step's translations could not be read"

// errNoTranslationReader: values use {{t.key}} and nothing can read the
// translations (the trigger planner leaves such a step to the workers).
var errNoTranslationReader = errors.New("engine: translations cannot be read here")

// Translate is where {{t.key}} is resolved, for every template Herald
// renders: it returns values (controls as sandbox.Controls takes them, or
// one template) with each {{t.key}} replaced by the text of the resource's
// translation (resourceType store.TranslationWorkflow or
// store.TranslationLayout, resourceID the workflowId or layoutId) in the
// locale ("fr_FR"; "fr-FR" alike), each key missing there taken from the
// organization's default locale. Liquid runs over the result afterwards,
// so a translation may hold Liquid. A key found in neither fails with a
// *sandbox.Error (ReasonTranslation); the text made is under the sandbox's
// output budget. Values without {{t.key}} are returned as they are, without
// a read; so are the values of a resource without any translation (the
// placeholder then renders as a missing variable does: empty).
func Translate(ctx context.Context, sb *sandbox.Sandbox, r TranslationReader, scope store.Scope,
	resourceType, resourceID, locale string, values any) (any, error) {
	if !sandbox.HasTranslations(values) {
		return values, nil
	}
	if r == nil {
		return nil, errNoTranslationReader
	}
	set, err := r.TranslationSetFor(ctx, &store.TranslationKey{Scope: scope, ResourceType: resourceType,
		ResourceID: resourceID, Locale: NormalizeLocale(locale)})
	if err != nil {
		return nil, fmt.Errorf("engine: reading the translations: %w", err)
	}
	if !set.Any {
		return values, nil
	}
	var own, def map[string]any
	_ = json.Unmarshal(set.Locale, &own)
	_ = json.Unmarshal(set.Default, &def)
	return sb.Translate(values, func(key string) (string, bool) {
		if s, ok := TranslationText(own, key); ok {
			return s, true
		}
		return TranslationText(def, key)
	})
}

// NormalizeLocale spells a locale as translations are kept: "fr-FR" is "fr_FR".
func NormalizeLocale(locale string) string {
	return strings.ReplaceAll(strings.TrimSpace(locale), "-", "_")
}

// TranslationText finds a dotted key in a translation's content, where
// objects nest ({"email":{"subject":…}}) or keys hold dots
// ({"email.subject":…}), or both. A string is the text; a number or a
// boolean its JSON spelling; anything else is not found. The look-up tries
// at most maxKeySteps ways of splitting the key.
func TranslationText(content map[string]any, key string) (string, bool) {
	steps := maxKeySteps
	return findKey(content, key, &steps)
}

// maxKeySteps bounds one key's look-up: contents nesting objects under
// keys with dots could otherwise make it exponential in the key's dots.
const maxKeySteps = 1000

func findKey(content map[string]any, key string, steps *int) (string, bool) {
	if content == nil || *steps <= 0 {
		return "", false
	}
	*steps--
	if v, ok := content[key]; ok {
		if s, ok := leafText(v); ok {
			return s, true
		}
	}
	for i := len(key) - 1; i > 0; i-- {
		if key[i] != '.' {
			continue
		}
		if sub, ok := content[key[:i]].(map[string]any); ok {
			if s, ok := findKey(sub, key[i+1:], steps); ok {
				return s, true
			}
		}
	}
	return "", false
}

func leafText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}
