package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/osteele/liquid/filters"
	lrender "github.com/osteele/liquid/render"
	"github.com/osteele/liquid/values"
)

// renderConfig is a Liquid configuration whose filters charge one budget.
// Filters see no render context, so each pooled configuration has its own
// filter table bound to its own budget.
type renderConfig struct {
	cfg lrender.Config
	b   *budget
}

func newRenderConfig() *renderConfig {
	b := &budget{}
	return &renderConfig{cfg: newConfig(b), b: b}
}

// newConfig builds Herald's Liquid configuration: its tags, and the standard
// filters (the unsafe ones replaced) behind budget checks bound to b (nil
// for the parsing configuration, whose filters never run).
func newConfig(b *budget) lrender.Config {
	cfg := lrender.NewConfig()
	addTags(cfg)
	filters.AddStandardFilters(filterTable{cfg: &cfg, b: b})
	return cfg
}

type filterTable struct {
	cfg *lrender.Config
	b   *budget
}

// AddFilter registers a filter behind the budget: one tick per call; no
// range longer than the value limit as an argument (it would be made into an
// array); the result counted against the value and work limits; a panic
// becomes the filter's error.
func (t filterTable) AddFilter(name string, fn any) {
	if safe := safeFilter(name, t.b); safe != nil {
		fn = safe
	}
	fv := reflect.ValueOf(fn)
	b := t.b
	t.cfg.AddFilter(name, func(in any, args ...any) (out any, err error) {
		if b == nil || b.l == nil {
			return nil, errors.New("the filter ran outside Herald's sandbox")
		}
		if err := b.tick(); err != nil {
			return nil, err
		}
		all := append([]any{in}, args...)
		for _, a := range all {
			if r, ok := a.(values.Range); ok && (r.Len() < 0 || r.Len() > b.l.MaxValue/8) {
				return nil, b.wouldMake(math.MaxInt)
			}
		}
		defer func() {
			if p := recover(); p != nil {
				out, err = nil, b.err
				if err == nil {
					err = fmt.Errorf("%v", p)
				}
			}
		}()
		out, err = values.Call(fv, all)
		if err != nil {
			if b.err != nil {
				return nil, b.err
			}
			return nil, err
		}
		if err := b.made(sizeOf(out, b.l.MaxValue)); err != nil {
			return nil, err
		}
		return out, nil
	})
}

var errDivisionByZero = errors.New("division by zero")

// safeFilter returns Herald's version of a standard filter that could
// panic, run in more than linear time, or make a huge value before the
// budget could see it; nil keeps the standard one.
func safeFilter(name string, b *budget) any {
	switch name {
	case "slice":
		return sliceFilter
	case "truncate":
		return truncateFilter
	case "truncatewords":
		return truncateWordsFilter
	case "uniq":
		return uniqFilter
	case "modulo":
		return func(a, n float64) (float64, error) {
			if n == 0 {
				return 0, errDivisionByZero
			}
			return math.Mod(a, n), nil
		}
	case "join":
		return func(a []any, sep func(string) string) (string, error) {
			s := sep(" ")
			parts := make([]string, 0, len(a))
			n := 0
			for _, v := range a {
				if v != nil {
					p := fmt.Sprint(v)
					parts = append(parts, p)
					n += len(p) + len(s)
					if err := b.wouldMake(n); err != nil {
						return "", err
					}
				}
			}
			return strings.Join(parts, s), nil
		}
	case "replace", "replace_first", "remove", "remove_first":
		first := strings.HasSuffix(name, "_first")
		remove := strings.HasPrefix(name, "remove")
		return func(s, old string, with func(string) string) (string, error) {
			n := with("")
			if remove {
				n = ""
			}
			count := 1
			if !first {
				count = strings.Count(s, old)
			}
			if err := b.wouldMake(len(s) + count*(len(n)-len(old))); err != nil {
				return "", err
			}
			if first {
				return strings.Replace(s, old, n, 1), nil
			}
			return strings.ReplaceAll(s, old, n), nil
		}
	case "split":
		return func(s, sep string) ([]string, error) {
			pieces := utf8.RuneCountInString(s)
			if sep != "" && sep != " " {
				pieces = strings.Count(s, sep) + 1
			}
			if err := b.wouldMake(len(s) + 16*pieces); err != nil {
				return nil, err
			}
			var out []string
			if sep == " " {
				out = strings.Fields(s)
			} else {
				out = strings.Split(s, sep)
			}
			for len(out) > 0 && out[len(out)-1] == "" {
				out = out[:len(out)-1]
			}
			return out, nil
		}
	}
	return nil
}

// sliceFilter is Liquid's slice of a string (by characters) or an array:
// from start (negative counts from the end) for length items, clamped.
func sliceFilter(v any, start int, length func(int) int) any {
	n := length(1)
	bounds := func(size int) (int, int) {
		from := start
		if from < 0 {
			from += size
		}
		if from < 0 || from >= size || n <= 0 {
			return 0, 0
		}
		return from, from + min(n, size-from)
	}
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		r := []rune(t)
		from, to := bounds(len(r))
		return string(r[from:to])
	case []any:
		from, to := bounds(len(t))
		return append([]any{}, t[from:to]...)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		from, to := bounds(rv.Len())
		out := make([]any, 0, to-from)
		for i := from; i < to; i++ {
			out = append(out, rv.Index(i).Interface())
		}
		return out
	}
	r := []rune(fmt.Sprint(v))
	from, to := bounds(len(r))
	return string(r[from:to])
}

// truncateFilter shortens s to length characters, ellipsis included.
func truncateFilter(s string, length func(int) int, ellipsis func(string) string) string {
	n, el := length(50), ellipsis("...")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := max(n-utf8.RuneCountInString(el), 0)
	r := []rune(s)
	return string(r[:min(keep, len(r))]) + el
}

// truncateWordsFilter keeps the first length words of s.
func truncateWordsFilter(s string, length func(int) int, ellipsis func(string) string) string {
	n, el := max(length(15), 1), ellipsis("...")
	words := strings.Fields(s)
	if len(words) <= n {
		return s
	}
	return strings.Join(words[:n], " ") + el
}

// uniqFilter drops repeated items in linear time: nulls, maps and arrays
// included (compared by their JSON).
func uniqFilter(a []any) []any {
	seen := map[any]bool{}
	out := []any{}
	for _, item := range a {
		key := item
		if item != nil && !reflect.TypeOf(item).Comparable() {
			j, err := json.Marshal(item)
			if err != nil {
				j = []byte(fmt.Sprintf("%#v", item))
			}
			key = "\x00json:" + string(j)
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, item)
		}
	}
	return out
}
