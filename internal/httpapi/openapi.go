package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPIJSON returns the served OpenAPI document.
func OpenAPIJSON() []byte { return mustOpenAPIJSON() }

func mustOpenAPIJSON() []byte {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		panic(fmt.Sprintf("httpapi: openapi.yaml: %v", err))
	}
	out, err := json.Marshal(jsonable(doc))
	if err != nil {
		panic(fmt.Sprintf("httpapi: openapi.yaml: %v", err))
	}
	return out
}

// jsonable turns YAML's map[any]any-free tree into JSON-encodable values
// (yaml.v3 decodes mappings to map[string]any, but keys like 200 stay ints).
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	}
	return v
}
