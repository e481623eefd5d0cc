package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/internal/httpstep"
	"github.com/herald-notify/herald/internal/jsonlogic"
)

// ControlError is a step control that cannot be used; Field is relative to
// controlValues.
type ControlError struct{ Field, Msg string }

// CheckControls refuses the controls of a step that could not run as
// written: a condition (skip) that is not a JSONLogic object of known
// operations, a throttle or HTTP request step's controls outside their
// schemas, a cron expression that does not parse, a digest's
// lookBackWindow without a usable amount and unit. A control holding a
// template ("{{") is checked when it renders.
func CheckControls(stepType string, values map[string]any) []ControlError {
	var errs []ControlError
	add := func(field, msg string) { errs = append(errs, ControlError{field, msg}) }
	if raw, ok := values["skip"]; ok && raw != nil {
		if _, isObj := raw.(map[string]any); !isObj {
			add("skip", "must be a JSONLogic object (the step's conditions)")
		} else if _, err := jsonlogic.Parse(raw); err != nil {
			var le *jsonlogic.Error
			if errors.As(err, &le) && le.Path != "" {
				add("skip", fmt.Sprintf("is not a valid condition at %s: %s", le.Path, le.Msg))
			} else {
				add("skip", "is not a valid condition: "+err.Error())
			}
		}
	}
	switch stepType {
	case "throttle":
		checkThrottle(values, add)
	case "http_request":
		for _, e := range httpstep.CheckControls(values) {
			add(e.Field, e.Msg)
		}
	case "delay":
		if str(values["type"]) == "timed" {
			checkCron(values, true, add)
		}
	case "digest":
		checkCron(values, false, add)
		if lb, ok := values["lookBackWindow"]; ok && lb != nil {
			m, isObj := lb.(map[string]any)
			if !isObj {
				add("lookBackWindow", "must be an object {amount, unit}")
				break
			}
			if n, ok := number(m["amount"]); !ok || n <= 0 {
				if !isTemplate(m["amount"]) {
					add("lookBackWindow.amount", "must be a number greater than 0")
				}
			}
			if u := str(m["unit"]); !digestUnits[u] && !isTemplate(m["unit"]) {
				add("lookBackWindow.unit", "must be one of seconds, minutes, hours, days, weeks, months")
			}
		}
	}
	return errs
}

var digestUnits = map[string]bool{"seconds": true, "minutes": true, "hours": true, "days": true, "weeks": true, "months": true}

func isTemplate(v any) bool {
	s, ok := v.(string)
	return ok && (strings.Contains(s, "{{") || strings.Contains(s, "{%"))
}

// checkCron checks the cron control (required: it must be there).
func checkCron(values map[string]any, required bool, add func(field, msg string)) {
	v, ok := values["cron"]
	if s, isStr := v.(string); !ok || v == nil || (isStr && strings.TrimSpace(s) == "") {
		if required {
			add("cron", "is required: a timed delay waits until the cron expression's next time")
		}
		return
	}
	s, isStr := v.(string)
	switch {
	case !isStr:
		add("cron", "must be a cron expression (a string)")
	case isTemplate(s):
	default:
		if why := CheckCron(s); why != "" {
			add("cron", "is not a valid cron expression: "+why)
		}
	}
}

// checkThrottle checks a throttle step's controls as Novu's schema does.
func checkThrottle(values map[string]any, add func(field, msg string)) {
	typ := "fixed"
	if v, ok := values["type"]; ok && v != nil {
		typ = str(v)
	}
	switch typ {
	case "fixed":
		if n, isNum := values["amount"].(float64); (!isNum || n < 1 || n != float64(int64(n))) && !isTemplate(values["amount"]) {
			add("amount", "is required: a whole number of at least 1")
		}
		if u := str(values["unit"]); !throttleUnits[u] {
			add("unit", "must be one of minutes, hours, days")
		}
	case "dynamic":
		if k, ok := values["dynamicKey"].(string); !ok || strings.TrimSpace(k) == "" {
			add("dynamicKey", "is required for a dynamic throttle: the payload path of the window's end")
		}
	default:
		add("type", "must be one of fixed, dynamic")
	}
	if v, ok := values["threshold"]; ok && v != nil {
		if n, isNum := v.(float64); !isNum || n < 1 || n != float64(int64(n)) {
			add("threshold", "must be a whole number of at least 1")
		}
	}
	if v, ok := values["throttleKey"]; ok && v != nil {
		if _, isStr := v.(string); !isStr {
			add("throttleKey", "must be a string: a payload path or a template")
		}
	}
}
