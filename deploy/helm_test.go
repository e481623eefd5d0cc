package deploy

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

const chart = "helm/herald"

// The parts of the rendered objects the checks read.
type (
	meta struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	secretObject struct {
		Metadata meta              `yaml:"metadata"`
		Data     map[string]string `yaml:"data"`
	}
	serviceObject struct {
		Metadata meta `yaml:"metadata"`
		Spec     struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []struct {
				Port       int    `yaml:"port"`
				TargetPort string `yaml:"targetPort"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	pvcObject struct {
		Metadata meta `yaml:"metadata"`
	}
	deploymentObject struct {
		Metadata meta `yaml:"metadata"`
		Spec     struct {
			Replicas int `yaml:"replicas"`
			Strategy struct {
				Type string `yaml:"type"`
			} `yaml:"strategy"`
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata meta `yaml:"metadata"`
				Spec     struct {
					SecurityContext struct {
						RunAsNonRoot bool `yaml:"runAsNonRoot"`
						RunAsUser    int  `yaml:"runAsUser"`
					} `yaml:"securityContext"`
					Containers []container `yaml:"containers"`
					Volumes    []struct {
						Name                  string `yaml:"name"`
						PersistentVolumeClaim *struct {
							ClaimName string `yaml:"claimName"`
						} `yaml:"persistentVolumeClaim"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	container struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Env   []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom *struct {
				SecretKeyRef *struct {
					Name string `yaml:"name"`
					Key  string `yaml:"key"`
				} `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		LivenessProbe  *probe `yaml:"livenessProbe"`
		ReadinessProbe *probe `yaml:"readinessProbe"`
		VolumeMounts   []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	probe struct {
		HTTPGet *struct {
			Path string `yaml:"path"`
			Port string `yaml:"port"`
		} `yaml:"httpGet"`
	}
)

// rendered is `helm template`'s output, by kind and name.
type rendered struct {
	secrets     map[string]secretObject
	services    []serviceObject
	pvcs        map[string]pvcObject
	deployments []deploymentObject
}

func parseRendered(t *testing.T, out []byte) rendered {
	t.Helper()
	r := rendered{secrets: map[string]secretObject{}, pvcs: map[string]pvcObject{}}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		var head struct {
			Kind string `yaml:"kind"`
		}
		require.NoError(t, doc.Decode(&head))
		switch head.Kind {
		case "":
			continue // an empty document
		case "Secret":
			var o secretObject
			require.NoError(t, doc.Decode(&o))
			r.secrets[o.Metadata.Name] = o
		case "Service":
			var o serviceObject
			require.NoError(t, doc.Decode(&o))
			r.services = append(r.services, o)
		case "PersistentVolumeClaim":
			var o pvcObject
			require.NoError(t, doc.Decode(&o))
			r.pvcs[o.Metadata.Name] = o
		case "Deployment":
			var o deploymentObject
			require.NoError(t, doc.Decode(&o))
			r.deployments = append(r.deployments, o)
		default:
			t.Fatalf("the chart renders an unexpected %s", head.Kind)
		}
	}
	return r
}

// helm runs the helm binary with its homes in a temporary directory.
func helm(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	bin := tool(t, "helm")
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home,
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"), "KUBECONFIG=" + filepath.Join(home, "no-kubeconfig")}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "helm %s:\n%s%s", strings.Join(args, " "), out, stderr.String())
	return out
}

func TestHelmLint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		set  []string
	}{
		{"defaults", nil},
		{"postgres", []string{"database.url=postgres://herald:pw@db:5432/herald", "secret.existingSecret=herald-keys"}},
		{"postgres from a secret", []string{"database.existingSecret=herald-db", "secret.value=abc"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"lint", "--strict", chart}
			for _, s := range c.set {
				args = append(args, "--set", s)
			}
			require.Contains(t, string(helm(t, nil, args...)), "0 chart(s) failed")
		})
	}
}

// TestHelmTemplateDefaults: with no values the chart runs one pod on SQLite,
// its data on a volume and a generated secret in the chart's Secret.
func TestHelmTemplateDefaults(t *testing.T) {
	t.Parallel()
	r := parseRendered(t, helm(t, nil, "template", "rel", chart, "--namespace", "herald"))
	require.Len(t, r.deployments, 1)
	d := r.deployments[0]
	require.Equal(t, 1, d.Spec.Replicas, "SQLite: one process")
	require.Equal(t, "Recreate", d.Spec.Strategy.Type, "the old pod lets go of the volume before the new one starts")
	c := checkDeployment(t, r, d, "all")
	require.Empty(t, envRef(c, "HERALD_DATABASE_URL"), "no database URL: SQLite")
	checkService(t, r, d, nil)

	ref := envRef(c, "HERALD_SECRET")
	s := requireSecretKey(t, r, ref)
	require.Equal(t, "keep", r.secrets[ref[0]].Metadata.Annotations["helm.sh/resource-policy"], "helm uninstall leaves the secret")
	require.GreaterOrEqual(t, len(s), 32, "a generated secret")

	// The data directory is the volume of the chart's claim.
	var dataDir string
	for _, e := range c.Env {
		if e.Name == "HERALD_DATA_DIR" {
			dataDir = e.Value
		}
	}
	var claim string
	for _, m := range c.VolumeMounts {
		if m.MountPath == dataDir {
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == m.Name && v.PersistentVolumeClaim != nil {
					claim = v.PersistentVolumeClaim.ClaimName
				}
			}
		}
	}
	require.NotEmpty(t, claim, "HERALD_DATA_DIR %q is on a persistent volume", dataDir)
	require.Contains(t, r.pvcs, claim)
	require.Equal(t, "keep", r.pvcs[claim].Metadata.Annotations["helm.sh/resource-policy"], "helm uninstall leaves the database")
}

// TestHelmTemplatePostgres: a database splits the API and worker roles, the
// Service reaching the API pods only, and secrets come from where the values
// say.
func TestHelmTemplatePostgres(t *testing.T) {
	t.Parallel()
	t.Run("URL in the chart's Secret, server secret in an existing one", func(t *testing.T) {
		t.Parallel()
		const url = "postgres://herald:pw@db.example:5432/herald?sslmode=require"
		r := parseRendered(t, helm(t, nil, "template", "rel", chart,
			"--set", "database.url="+url, "--set", "secret.existingSecret=herald-keys", "--set", "secret.existingSecretKey=server-secret",
			"--set", "api.replicas=3", "--set", "worker.replicas=4"))
		api, worker := splitRoles(t, r)
		require.Equal(t, 3, api.Spec.Replicas)
		require.Equal(t, 4, worker.Spec.Replicas)
		a := checkDeployment(t, r, api, "api")
		w := checkDeployment(t, r, worker, "worker")
		checkService(t, r, api, &worker)
		for _, c := range []container{a, w} {
			require.Equal(t, []string{"herald-keys", "server-secret"}, envRef(c, "HERALD_SECRET"))
			require.Equal(t, url, requireSecretKey(t, r, envRef(c, "HERALD_DATABASE_URL")))
		}
		for name, s := range r.secrets {
			require.NotContains(t, s.Data, "secret", "%s: no server secret generated when one is given", name)
		}
		require.Empty(t, r.pvcs, "PostgreSQL keeps the data")
	})
	t.Run("URL in an existing Secret, server secret given", func(t *testing.T) {
		t.Parallel()
		r := parseRendered(t, helm(t, nil, "template", "rel", chart,
			"--set", "database.existingSecret=herald-db", "--set", "secret.value=given-secret-value"))
		api, worker := splitRoles(t, r)
		for _, d := range []deploymentObject{api, worker} {
			c := checkDeployment(t, r, d, roleOf(d))
			require.Equal(t, []string{"herald-db", "database-url"}, envRef(c, "HERALD_DATABASE_URL"))
			require.Equal(t, "given-secret-value", requireSecretKey(t, r, envRef(c, "HERALD_SECRET")))
		}
		checkService(t, r, api, &worker)
	})
}

// TestHelmUpgradeKeepsSecret renders against a Kubernetes API server (a local
// fake speaking its HTTP protocol): with no Secret there the chart generates
// one; with the Secret an earlier install made, it renders the same value —
// `helm upgrade` keeps the secret that the database was encrypted with.
func TestHelmUpgradeKeepsSecret(t *testing.T) {
	t.Parallel()
	cluster := startFakeCluster(t)
	render := func() string {
		r := parseRendered(t, helm(t, []string{"KUBECONFIG=" + cluster.kubeconfig},
			"template", "rel", chart, "--namespace", "herald", "--dry-run=server", "--disable-openapi-validation"))
		require.Len(t, r.deployments, 1)
		c := checkDeployment(t, r, r.deployments[0], "all")
		return requireSecretKey(t, r, envRef(c, "HERALD_SECRET"))
	}
	first := render()
	require.Contains(t, cluster.requests(), "GET /api/v1/namespaces/herald/secrets/rel-herald", "the chart looks its Secret up")
	require.NotEqual(t, first, render(), "without a Secret to keep, each render generates its own")

	cluster.putSecret("herald", "rel-herald", "rel", map[string]string{"secret": first})
	require.Equal(t, first, render(), "an upgrade keeps the installed secret")
	require.Equal(t, first, render())
}

// checkDeployment checks what every Herald Deployment needs and returns its
// container: pods its selector matches, `serve --role ROLE`, a non-root
// user, HERALD_ADDR on 0.0.0.0 at a declared port, /health probes on a
// declared port, HERALD_SECRET from a Secret.
func checkDeployment(t *testing.T, r rendered, d deploymentObject, role string) container {
	t.Helper()
	name := d.Metadata.Name
	pod := d.Spec.Template
	require.NotEmpty(t, d.Spec.Selector.MatchLabels, name)
	require.True(t, selects(d.Spec.Selector.MatchLabels, pod.Metadata.Labels), "%s: its selector matches its pods", name)
	require.True(t, pod.Spec.SecurityContext.RunAsNonRoot, name)
	require.NotZero(t, pod.Spec.SecurityContext.RunAsUser, name)
	require.Len(t, pod.Spec.Containers, 1, name)
	c := pod.Spec.Containers[0]
	require.Equal(t, []string{"serve", "--role", role}, c.Args, name)

	var addr string
	for _, e := range c.Env {
		if e.Name == "HERALD_ADDR" {
			addr = e.Value
		}
	}
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err, "%s: HERALD_ADDR %q", name, addr)
	require.Equal(t, "0.0.0.0", host, "%s: reachable from outside the pod", name)
	require.True(t, declaresPort(c, port), "%s: HERALD_ADDR's port %s is a container port", name, port)
	for kind, p := range map[string]*probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		require.NotNil(t, p, "%s: %s probe", name, kind)
		require.NotNil(t, p.HTTPGet, "%s: %s probe", name, kind)
		require.Equal(t, "/health", p.HTTPGet.Path, "%s: %s probe", name, kind)
		require.True(t, declaresPort(c, p.HTTPGet.Port), "%s: %s probe's port %q is declared", name, kind, p.HTTPGet.Port)
		require.Equal(t, port, portNumber(c, p.HTTPGet.Port), "%s: %s probe reaches HERALD_ADDR's port", name, kind)
	}
	require.Len(t, envRef(c, "HERALD_SECRET"), 2, "%s: HERALD_SECRET by secretKeyRef", name)
	return c
}

// checkService checks the one Service: it selects the API pods (and not the
// worker's), at a port the container declares.
func checkService(t *testing.T, r rendered, api deploymentObject, worker *deploymentObject) {
	t.Helper()
	require.Len(t, r.services, 1)
	s := r.services[0]
	require.NotEmpty(t, s.Spec.Selector)
	require.True(t, selects(s.Spec.Selector, api.Spec.Template.Metadata.Labels), "the Service selects the API pods")
	if worker != nil {
		require.False(t, selects(s.Spec.Selector, worker.Spec.Template.Metadata.Labels), "the Service never sends requests to workers")
	}
	require.NotEmpty(t, s.Spec.Ports)
	for _, p := range s.Spec.Ports {
		require.True(t, declaresPort(api.Spec.Template.Spec.Containers[0], p.TargetPort), "targetPort %q is a container port", p.TargetPort)
	}
}

func splitRoles(t *testing.T, r rendered) (api, worker deploymentObject) {
	t.Helper()
	require.Len(t, r.deployments, 2)
	for _, d := range r.deployments {
		switch roleOf(d) {
		case "api":
			api = d
		case "worker":
			worker = d
		}
	}
	require.NotEmpty(t, api.Metadata.Name, "an API Deployment")
	require.NotEmpty(t, worker.Metadata.Name, "a worker Deployment")
	require.NotEqual(t, api.Spec.Selector.MatchLabels, worker.Spec.Selector.MatchLabels, "each Deployment owns its pods")
	return api, worker
}

// roleOf is the --role a Deployment's container runs with.
func roleOf(d deploymentObject) string {
	args := d.Spec.Template.Spec.Containers[0].Args
	if i := slices.Index(args, "--role"); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// declaresPort: port, a name or a number, is one of the container's ports.
func declaresPort(c container, port string) bool { return portNumber(c, port) != "" }

// portNumber is the number of the container's port named or numbered port.
func portNumber(c container, port string) string {
	for _, p := range c.Ports {
		if p.Name == port || strconv.Itoa(p.ContainerPort) == port {
			return strconv.Itoa(p.ContainerPort)
		}
	}
	return ""
}

// envRef is the Secret name and key an environment variable comes from.
func envRef(c container, name string) []string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return []string{e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key}
		}
	}
	return nil
}

// requireSecretKey is the value at ref (Secret name, key), which the render
// must hold.
func requireSecretKey(t *testing.T, r rendered, ref []string) string {
	t.Helper()
	require.Len(t, ref, 2)
	s, ok := r.secrets[ref[0]]
	require.True(t, ok, "Secret %s is rendered", ref[0])
	v, ok := s.Data[ref[1]]
	require.True(t, ok, "Secret %s has %s", ref[0], ref[1])
	b, err := base64.StdEncoding.DecodeString(v)
	require.NoError(t, err)
	require.NotEmpty(t, b)
	return string(b)
}
