package main

import (
	"os/exec"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryHasNoTestCode: nothing the herald binary links is test code —
// not the testing packages (testdb and every other test helper import them),
// testify or httptest, none of Herald's packages named …test (providertest,
// openapitest, nodetest) nor a provider's wire fake (packages named …fake).
// The fakes live in packages of their own for that reason; a fake imported by
// product code would pull all of these in.
func TestBinaryHasNoTestCode(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/herald-notify/herald/internal/provider/registry", "the list is the binary's")

	const module = "github.com/herald-notify/herald/"
	var test []string
	for _, p := range deps {
		name := path.Base(p)
		switch {
		case p == "testing" || strings.HasPrefix(p, "testing/"),
			p == "net/http/httptest",
			strings.HasPrefix(p, "github.com/stretchr/testify/"),
			strings.HasPrefix(p, module) && (strings.HasSuffix(name, "test") || strings.HasSuffix(name, "fake")):
			test = append(test, p)
		}
	}
	require.Empty(t, test, "test code linked into the herald binary")
}
