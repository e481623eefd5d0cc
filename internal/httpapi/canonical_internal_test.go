package httpapi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in, want string
	}{
		{"keys sorted, whitespace dropped", "{ \"b\" : 1 ,\n\t\"a\" : [ true , null ] }", `{"a":[true,null],"b":1}`},
		{"nested objects sorted", `{"z":{"y":1,"x":{"d":1,"c":2}}}`, `{"z":{"x":{"c":2,"d":1},"y":1}}`},
		{"numbers keep their text", `{"n":[1.0,1e3,-0,12345678901234567890123]}`, `{"n":[1.0,1e3,-0,12345678901234567890123]}`},
		{"string escapes unified", `["caf\u00e9","\/","\u0041"]`, `["café","/","A"]`},
		{"a repeated key keeps the last", `{"a":1,"a":2}`, `{"a":2}`},
		{"not JSON", `{"a":`, `{"a":`},
		{"trailing data", `{"a":1} {"b":2}`, `{"a":1} {"b":2}`},
		{"trailing whitespace", "{\"a\":1}\n\n", `{"a":1}`},
		{"empty", "", ""},
		{"blank", "  ", "  "},
		{"not UTF-8", "[\"\xff\"]", "[\"\xff\"]"},
		{"a scalar", ` "x" `, `"x"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, string(canonicalJSON([]byte(c.in))))
		})
	}
}
