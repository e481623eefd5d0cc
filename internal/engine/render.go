package engine

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/osteele/liquid"

	"github.com/herald-notify/herald/internal/store"
)

// renderer renders Liquid controls, caching parsed templates by source.
type renderer struct {
	engine *liquid.Engine
	mu     sync.RWMutex
	cache  map[string]*liquid.Template
}

const maxCachedTemplates = 10000

func newRenderer() *renderer {
	return &renderer{engine: liquid.NewEngine(), cache: map[string]*liquid.Template{}}
}

// render renders one template source with the bindings.
func (r *renderer) render(src string, b liquid.Bindings) (string, error) {
	if src == "" {
		return "", nil
	}
	r.mu.RLock()
	t, ok := r.cache[src]
	r.mu.RUnlock()
	if !ok {
		var err error
		t, err = r.engine.ParseString(src)
		if err != nil {
			return "", err
		}
		r.mu.Lock()
		if len(r.cache) >= maxCachedTemplates {
			r.cache = map[string]*liquid.Template{}
		}
		r.cache[src] = t
		r.mu.Unlock()
	}
	out, err := t.RenderString(b)
	if err != nil {
		return "", err
	}
	return out, nil
}

// bindings are the variables a step's templates see.
func bindings(sub store.Subscriber, payload store.JSON, step map[string]any) liquid.Bindings {
	s := map[string]any{
		"subscriberId": sub.SubscriberID, "_id": sub.ID,
		"firstName": deref(sub.FirstName), "lastName": deref(sub.LastName), "email": deref(sub.Email),
		"phone": deref(sub.Phone), "avatar": deref(sub.Avatar), "locale": deref(sub.Locale), "timezone": deref(sub.Timezone),
	}
	if len(sub.Data) > 0 {
		var d any
		if json.Unmarshal(sub.Data, &d) == nil {
			s["data"] = d
		}
	}
	var p any = map[string]any{}
	if len(payload) > 0 {
		_ = json.Unmarshal(payload, &p)
	}
	b := liquid.Bindings{"subscriber": s, "payload": p}
	if step != nil {
		b["step"] = step
	}
	return b
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// controls renders the string controls of a step, recursively through
// objects, and returns a copy.
func (r *renderer) controls(values map[string]any, b liquid.Bindings) (map[string]any, error) {
	out := make(map[string]any, len(values))
	for k, v := range values {
		rv, err := r.value(v, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = rv
	}
	return out, nil
}

func (r *renderer) value(v any, b liquid.Bindings) (any, error) {
	switch t := v.(type) {
	case string:
		return r.render(t, b)
	case map[string]any:
		return r.controls(t, b)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			rx, err := r.value(x, b)
			if err != nil {
				return nil, err
			}
			out[i] = rx
		}
		return out, nil
	}
	return v, nil
}
