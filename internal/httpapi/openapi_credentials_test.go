package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/provider/registry"
)

// TestOpenAPICredentialsFromRegistry: the served IntegrationCredentials
// schema lists exactly the registry's credential keys, each of its type and
// naming the providers that require it; openapi.yaml lists none of its own.
func TestOpenAPICredentialsFromRegistry(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(httpapi.OpenAPIJSON(), &doc))
	var schema struct {
		AdditionalProperties *bool `json:"additionalProperties"`
		Properties           map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(doc.Components.Schemas["IntegrationCredentials"], &schema))
	require.NotNil(t, schema.AdditionalProperties)
	require.False(t, *schema.AdditionalProperties, "a key no provider reads is not part of the schema")

	keys := registry.Default().CredentialKeys()
	require.Len(t, schema.Properties, len(keys))
	for _, k := range keys {
		p, ok := schema.Properties[k.Key]
		require.True(t, ok, "%s is missing from the served schema", k.Key)
		require.Equal(t, k.Type, p.Type, k.Key)
		for _, id := range k.RequiredBy {
			require.Contains(t, p.Description, "`"+id+"`", "%s names the providers that require it", k.Key)
		}
	}
	require.Contains(t, schema.Properties["servicePlanId"].Description, "Required by `sinch`")
	require.Equal(t, "boolean", schema.Properties["secure"].Type)
	require.Equal(t, "object", schema.Properties["tlsOptions"].Type)
}
