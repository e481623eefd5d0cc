package deploy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeCluster is a Kubernetes API server on loopback, as much of one as
// `helm template --dry-run=server` asks for: version, discovery, and GETs of
// objects by name (Secrets it holds; any other object is not found).
type fakeCluster struct {
	kubeconfig string

	mu      sync.Mutex
	seen    []string
	secrets map[string]map[string]any // "namespace/name" → the Secret
}

func startFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	c := &fakeCluster{secrets: map[string]map[string]any{}}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	c.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(c.kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
  - name: fake
    cluster:
      server: %s
contexts:
  - name: fake
    context: {cluster: fake, user: fake}
current-context: fake
users:
  - name: fake
    user: {}
`, srv.URL), 0o600))
	return c
}

// putSecret stores a Secret as `helm install` of release made it.
func (c *fakeCluster) putSecret(namespace, name, release string, data map[string]string) {
	enc := map[string]string{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.secrets[namespace+"/"+name] = map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": enc,
		"metadata": map[string]any{
			"name": name, "namespace": namespace,
			"labels":      map[string]string{"app.kubernetes.io/managed-by": "Helm"},
			"annotations": map[string]string{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace},
		},
	}
}

// requests lists the requests served so far, as "METHOD PATH".
func (c *fakeCluster) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

func resources(group string, kinds ...string) map[string]any {
	var list []map[string]any
	for _, k := range kinds {
		plural := strings.ToLower(k) + "s"
		list = append(list, map[string]any{"name": plural, "singularName": strings.ToLower(k), "namespaced": true, "kind": k,
			"verbs": []string{"get", "list", "create", "update", "patch", "delete"}})
	}
	return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group, "resources": list}
}

func (c *fakeCluster) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.seen = append(c.seen, r.Method+" "+r.URL.Path)
	c.mu.Unlock()
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func() {
		reply(http.StatusNotFound, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})
	}
	if r.Method != http.MethodGet {
		notFound()
		return
	}
	switch p := r.URL.Path; p {
	case "/version":
		reply(http.StatusOK, map[string]string{"major": "1", "minor": "34", "gitVersion": "v1.34.0", "platform": "linux/amd64"})
	case "/api":
		reply(http.StatusOK, map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}}})
	case "/apis":
		gv := map[string]string{"groupVersion": "apps/v1", "version": "v1"}
		reply(http.StatusOK, map[string]any{"kind": "APIGroupList", "apiVersion": "v1",
			"groups": []map[string]any{{"name": "apps", "versions": []any{gv}, "preferredVersion": gv}}})
	case "/api/v1":
		reply(http.StatusOK, resources("v1", "Secret", "Service", "PersistentVolumeClaim"))
	case "/apis/apps/v1":
		reply(http.StatusOK, resources("apps/v1", "Deployment"))
	default:
		// /api/v1/namespaces/NS/secrets/NAME
		parts := strings.Split(strings.TrimPrefix(p, "/api/v1/namespaces/"), "/")
		if len(parts) == 3 && parts[1] == "secrets" {
			c.mu.Lock()
			s, ok := c.secrets[parts[0]+"/"+parts[2]]
			c.mu.Unlock()
			if ok {
				reply(http.StatusOK, s)
				return
			}
		}
		notFound()
	}
}
