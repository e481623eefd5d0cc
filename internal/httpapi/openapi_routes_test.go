package httpapi_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
)

// TestOpenAPIOperationsAreRoutes proves the OpenAPI document and the routes
// table describe the same operations: every operation of the document is a
// route the server registers, and every route is an operation of the
// document (the bad-input sweep checks that direction too, route by route).
// Wildcard names may differ; their places may not.
func TestOpenAPIOperationsAreRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(httpapi.OpenAPIJSON(), &doc))
	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	var documented []string
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				documented = append(documented, strings.ToUpper(method)+" "+wildcard.ReplaceAllString(path, "{}"))
			}
		}
	}
	var registered []string
	for _, p := range httpapi.RoutePatterns(httpapi.New(httpapi.Options{})) {
		registered = append(registered, wildcard.ReplaceAllString(p, "{}"))
	}
	require.NotEmpty(t, registered)
	require.ElementsMatch(t, registered, documented,
		"the OpenAPI document's operations (second list) and the registered routes (first list) differ")
}
