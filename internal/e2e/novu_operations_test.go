package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/herald-notify/herald/internal/nodetest"
)

// cloudOnly are the operations of @novu/api that belong to Novu's cloud
// and that Herald does not serve: custom sending domains, agents, channel
// connections and endpoints, activity tracking, and the integration
// set-ups that go through Novu's own OAuth apps and webhooks.
var cloudOnly = regexp.MustCompile(`^(domains|agents|channel|activity)[A-Z]|^integrations(CreateMobileLink|GenerateChatOAuthUrl|` +
	`GenerateConnectOAuthUrl|GenerateLinkUserOAuthUrl|IntegrationsControllerAutoConfigureIntegration|` +
	`IntegrationsControllerConfigureIntegrationWebhook|LinkChannelEndpoint)$`)

// TestNovuAPIOperationsServed: every operation of the pinned @novu/api
// (one file per operation in its funcs/, with its method and path) outside
// the cloud-only groups is a route of Herald's OpenAPI document — whose
// routes are exactly the server's (httpapi TestRoutesMatchOpenAPI).
// TestNovuAPIClient then calls them.
func TestNovuAPIOperationsServed(t *testing.T) {
	npm := nodetest.RequireTool(t, "npm")
	nodetest.NpmCI(t, npm, clientDir)
	files, err := filepath.Glob(filepath.Join(clientDir, "node_modules", "@novu", "api", "funcs", "*.js"))
	require.NoError(t, err)
	require.NotEmpty(t, files)

	raw, err := os.ReadFile(filepath.Join("..", "httpapi", "openapi.yaml"))
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	param := regexp.MustCompile(`\{[^}]*\}`)
	served := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			served[strings.ToUpper(method)+" "+param.ReplaceAllString(path, "{}")] = true
		}
	}

	methodRe := regexp.MustCompile(`method: "([A-Z]+)"`)
	pathRe := regexp.MustCompile(`pathToFunc\)\("([^"]+)"`)
	var missing []string
	ops := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".js")
		if cloudOnly.MatchString(name) {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		m, p := methodRe.FindSubmatch(src), pathRe.FindSubmatch(src)
		require.NotNil(t, m, "%s: no method", name)
		require.NotNil(t, p, "%s: no path", name)
		ops++
		if key := string(m[1]) + " " + param.ReplaceAllString(string(p[1]), "{}"); !served[key] {
			missing = append(missing, name+" ("+key+")")
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "operations of @novu/api that Herald does not serve")
	require.Equal(t, 105, ops, "the non-cloud operations of @novu/api 3.19.1")
}
