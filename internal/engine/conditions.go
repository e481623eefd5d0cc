package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/liquid"
)

// condition is one filter of an integration's conditions: its children
// joined by value (AND/OR), negated when isNegated.
type condition struct {
	IsNegated bool   `json:"isNegated"`
	Value     string `json:"value"`
	Children  []struct {
		Field    string `json:"field"`
		Value    string `json:"value"`
		Operator string `json:"operator"`
		On       string `json:"on"`
	} `json:"children"`
}

// conditionsMatch reports whether an integration's conditions hold for a
// subscriber and payload (the bindings of the step): every filter must
// pass. No conditions always match; unreadable ones never do.
func conditionsMatch(raw []byte, vars map[string]any) bool {
	if len(raw) == 0 || string(raw) == "[]" || string(raw) == "null" {
		return true
	}
	var conds []condition
	if json.Unmarshal(raw, &conds) != nil {
		return false
	}
	for _, c := range conds {
		if len(c.Children) == 0 {
			continue
		}
		ok := c.Value != "OR"
		for _, ch := range c.Children {
			v, found := lookup(liquid.ToGo(vars[ch.On]), ch.Field)
			r := compare(ch.Operator, v, found, ch.Value)
			if c.Value == "OR" {
				ok = ok || r
			} else {
				ok = ok && r
			}
		}
		if ok == c.IsNegated {
			return false
		}
	}
	return true
}

// lookup reads a dotted path of a decoded JSON value.
func lookup(v any, path string) (any, bool) {
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

func parseNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

func list(s string) []string {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// compare applies one operator of the filter catalogue.
func compare(op string, v any, found bool, want string) bool {
	got := text(v)
	switch op {
	case "EQUAL":
		return found && got == want
	case "NOT_EQUAL":
		return !found || got != want
	case "LARGER", "SMALLER", "LARGER_EQUAL", "SMALLER_EQUAL":
		a, ok1 := parseNumber(got)
		b, ok2 := parseNumber(want)
		if !found || !ok1 || !ok2 {
			return false
		}
		return map[string]bool{"LARGER": a > b, "SMALLER": a < b, "LARGER_EQUAL": a >= b, "SMALLER_EQUAL": a <= b}[op]
	case "LIKE":
		return found && strings.Contains(got, want)
	case "NOT_LIKE":
		return !found || !strings.Contains(got, want)
	case "IN", "ANY_IN":
		return found && anyIn(v, list(want))
	case "NOT_IN":
		return !found || !anyIn(v, list(want))
	case "ALL_IN":
		arr, ok := v.([]any)
		if !ok {
			return found && slices.Contains(list(want), got)
		}
		for _, x := range arr {
			if !slices.Contains(list(want), text(x)) {
				return false
			}
		}
		return true
	case "BETWEEN", "NOT_BETWEEN":
		bounds := list(want)
		a, ok := parseNumber(got)
		if len(bounds) != 2 || !found || !ok {
			return op == "NOT_BETWEEN"
		}
		lo, ok1 := parseNumber(bounds[0])
		hi, ok2 := parseNumber(bounds[1])
		in := ok1 && ok2 && a >= lo && a <= hi
		return in == (op == "BETWEEN")
	}
	return false
}

func anyIn(v any, set []string) bool {
	if arr, ok := v.([]any); ok {
		for _, x := range arr {
			if slices.Contains(set, text(x)) {
				return true
			}
		}
		return false
	}
	return slices.Contains(set, text(v))
}
