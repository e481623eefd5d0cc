package engine

import (
	"encoding/json"

	"github.com/herald-notify/herald/internal/store"
)

// bindings are the variables a step's templates see.
func bindings(sub store.Subscriber, payload store.JSON, step map[string]any) map[string]any {
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
	b := map[string]any{"subscriber": s, "payload": p}
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
