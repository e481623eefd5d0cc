package sandbox

import "testing"

// typicalStep is an e-mail step of an order confirmation: a subject, a
// body with a loop, arithmetic, a date and conditions, and an action.
var typicalStep = map[string]any{
	"subject": "Order {{ payload.order.id }} confirmed, {{ subscriber.firstName | default: 'there' }}",
	"body": "<p>Hi {{ subscriber.firstName }},</p><ul>{% for item in payload.order.items %}<li>{{ item.name | escape }} × {{ item.qty }}: " +
		"{{ item.price | times: item.qty | round: 2 }} {{ payload.order.currency | upcase }}</li>{% endfor %}</ul>" +
		"{% if payload.order.total > 100 %}<p>Free shipping!</p>{% else %}<p>Shipping: 4.99</p>{% endif %}" +
		"<p>Placed {{ payload.order.placedAt | date: '%B %-d, %Y %H:%M' }}</p>",
	"primaryAction": map[string]any{"label": "View order", "redirect": map[string]any{"url": "/orders/{{ payload.order.id }}"}},
}

func typicalVars() map[string]any {
	return map[string]any{
		"subscriber": map[string]any{"subscriberId": "u-1", "firstName": "Ada", "email": "ada@example.com"},
		"payload": map[string]any{"order": map[string]any{
			"id": "A-1017", "currency": "eur", "total": 129.5, "placedAt": "2026-11-26T09:15:00Z",
			"items": []any{
				map[string]any{"name": "Tea <green>", "qty": 2.0, "price": 12.25},
				map[string]any{"name": "Cups", "qty": 4.0, "price": 8.5},
				map[string]any{"name": "Kettle", "qty": 1.0, "price": 71},
			},
		}},
	}
}

// BenchmarkTypicalStep renders one typical step's controls (parsed
// templates cached, as in production).
func BenchmarkTypicalStep(b *testing.B) {
	s := New(Limits{})
	vars := typicalVars()
	if _, err := s.Controls(typicalStep, vars); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Controls(typicalStep, vars); err != nil {
			b.Fatal(err)
		}
	}
}
