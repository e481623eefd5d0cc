package engine

import (
	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/store"
)

// bindings are the variables a step's templates see, as Novu gives them:
// the payload and custom data with their keys in the order they were sent,
// and only the subscriber fields that are set (a field never set is
// absent, so `{% if subscriber.lastName %}` is false).
func bindings(sub store.Subscriber, payload store.JSON, step map[string]any) map[string]any {
	s := liquid.NewMap(10)
	s.Set("subscriberId", sub.SubscriberID)
	s.Set("_id", sub.ID)
	eachSubscriberField(sub, func(key, v string) { s.Set(key, v) })
	if len(sub.Data) > 0 {
		if d, err := liquid.ParseJSON(string(sub.Data)); err == nil {
			s.Set("data", d)
		}
	}
	var p any = liquid.NewMap(0)
	if len(payload) > 0 {
		if v, err := liquid.ParseJSON(string(payload)); err == nil {
			p = v
		}
	}
	b := map[string]any{"subscriber": s, "payload": p}
	if step != nil {
		b["step"] = step
	}
	return b
}

// eachSubscriberField calls fn with each contact field the subscriber has
// set (a field never set is left out): what templates, step conditions and
// bridges read of it besides subscriberId and data.
func eachSubscriberField(s store.Subscriber, fn func(key, value string)) {
	for _, f := range []struct {
		key string
		v   *string
	}{
		{"firstName", s.FirstName}, {"lastName", s.LastName}, {"email", s.Email}, {"phone", s.Phone},
		{"avatar", s.Avatar}, {"locale", s.Locale}, {"timezone", s.Timezone},
	} {
		if f.v != nil {
			fn(f.key, *f.v)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
