package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/config"
)

// TestServeDemoPageFlag runs the real binary: the demo page is on by
// default (GET /demo/ answers the page), and HERALD_DEMO_PAGE=false — the
// --demo-page flag's variable — turns it off (a 404, the API unchanged).
func TestServeDemoPageFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	for _, tc := range []struct {
		name   string
		env    []string
		status int
	}{
		{"default", nil, http.StatusOK},
		{"HERALD_DEMO_PAGE=true", []string{"HERALD_DEMO_PAGE=true"}, http.StatusOK},
		{"HERALD_DEMO_PAGE=false", []string{"HERALD_DEMO_PAGE=false"}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := append([]string{"HERALD_DATA_DIR=" + t.TempDir(), "HERALD_DATABASE_URL=", "HERALD_SECRET=", "HERALD_DEMO_PAGE="}, tc.env...)
			if tc.env == nil {
				env = env[:3] // the flag's default, not an empty variable
			}
			s := startServer(t, bin, env)
			for _, path := range []string{"/demo/", "/demo/config.json", "/demo/inbox.js"} {
				res, err := http.Get(s.base + path)
				require.NoError(t, err)
				res.Body.Close()
				require.Equal(t, tc.status, res.StatusCode, path)
			}
			res, err := http.Get(s.base + "/health")
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
		})
	}
}

// TestServeDemoPageBanner: with the page on, the banner prints its URL and
// the curl line that triggers the demo workflow — without a key.
func TestServeDemoPageBanner(t *testing.T) {
	t.Parallel()
	var out, logs syncBuffer
	base := startServe(t, config.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Role: "all", APIKey: "hk_demo_banner_0123456789abcdef",
		LogLevel: "error", DemoPage: true}, testConsole(&out, &logs, nil))
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "curl") }, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, out.String(), "Demo inbox: "+base+"/demo/")
	require.Contains(t, out.String(), "curl -s -X POST "+base+"/v1/events/trigger -H \"Authorization: ApiKey $HERALD_API_KEY\"")
	require.NotContains(t, out.String(), "hk_demo_banner")
}
