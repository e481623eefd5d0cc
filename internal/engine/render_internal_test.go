package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// TestBindings: templates see the subscriber fields that are set and no
// others (a field never set is absent, as in Novu: `{% if
// subscriber.lastName %}` is false), and the payload and custom data with
// their keys in the order they were sent.
func TestBindings(t *testing.T) {
	t.Parallel()
	ada, empty := "Ada", ""
	sub := store.Subscriber{ID: "s1", SubscriberID: "ada", FirstName: &ada, Phone: &empty, Data: store.JSON(`{"z":1,"a":{"y":2,"b":3}}`)}
	payload := store.JSON(`{"order":{"id":17,"b":"x","a":[1000191,1e21,1e-7]},"zeta":true,"alpha":null}`)
	sb := sandbox.New(sandbox.Limits{})
	for _, tc := range []struct{ name, src, want string }{
		{"set field", "{{ subscriber.firstName }}", "Ada"},
		{"never-set field is absent", "{% if subscriber.lastName %}yes{% else %}no{% endif %}|{{ subscriber.lastName | default: 'none' }}", "no|none"},
		{"never-set field is not empty", "{% if subscriber.email == empty %}empty{% else %}absent{% endif %}", "absent"},
		{"set to the empty string", "{% if subscriber.phone == empty %}empty{% endif %}", "empty"},
		{"payload in its own order", "{{ payload }}", "{'order':{'id':17,'b':'x','a':[1000191,1e+21,1e-7]},'zeta':true,'alpha':null}"},
		{"for over an object keeps the order", "{% for p in payload.order %}{{ p[0] }};{% endfor %}", "id;b;a;"},
		{"custom data in its own order", "{{ subscriber.data }}", "{'z':1,'a':{'y':2,'b':3}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sb.Render(tc.src, bindings(sub, payload, nil))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
