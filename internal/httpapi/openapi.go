package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/registry"
)

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPIJSON returns the OpenAPI document a server with the default
// provider registry serves.
func OpenAPIJSON() []byte { return mustOpenAPIJSON(registry.Default()) }

// mustOpenAPIJSON is openapi.yaml as JSON, with the credential keys of the
// server's provider registry as IntegrationCredentials' properties.
func mustOpenAPIJSON(providers *provider.Registry) []byte {
	var doc map[string]any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		panic(fmt.Sprintf("httpapi: openapi.yaml: %v", err))
	}
	schema, ok := lookup(doc, "components", "schemas", "IntegrationCredentials").(map[string]any)
	if !ok {
		panic("httpapi: openapi.yaml: no components.schemas.IntegrationCredentials")
	}
	schema["properties"] = credentialProperties(providers)
	out, err := json.Marshal(jsonable(doc))
	if err != nil {
		panic(fmt.Sprintf("httpapi: openapi.yaml: %v", err))
	}
	return out
}

// lookup follows keys down nested mappings (nil when one is missing).
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// credentialProperties describes every credential key of the registry: its
// type, and which providers read and require it.
func credentialProperties(r *provider.Registry) map[string]any {
	props := map[string]any{}
	for _, k := range r.CredentialKeys() {
		var d []string
		var optional []string
		for _, id := range k.ReadBy {
			if !slices.Contains(k.RequiredBy, id) {
				optional = append(optional, id)
			}
		}
		if len(k.RequiredBy) > 0 {
			d = append(d, "Required by "+codeList(k.RequiredBy)+".")
		}
		if len(optional) > 0 {
			d = append(d, "Optional for "+codeList(optional)+".")
		}
		if len(k.ReadBy) == 0 {
			d = append(d, "Kept for providers Herald stores but does not deliver through.")
		}
		if k.Type == provider.TypeObject {
			d = append(d, "Free-form.")
		}
		if k.Secret {
			d = append(d, "A secret: redacted from the provider answers Herald keeps.")
		}
		props[k.Key] = map[string]any{"type": k.Type, "description": strings.Join(d, " ")}
	}
	return props
}

// codeList writes ids as a list of code spans.
func codeList(ids []string) string {
	return "`" + strings.Join(ids, "`, `") + "`"
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
