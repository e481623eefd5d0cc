package nodetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BridgeAppDir is the Node project of a real Novu Framework app
// (clients/bridge-app: @novu/framework 2.13.2 over express), relative to
// the module's root.
const BridgeAppDir = "clients/bridge-app"

// StartBridgeApp runs the Novu Framework app of BridgeAppDir with the
// secret key (its NOVU_SECRET_KEY) on a free loopback port — npm ci first —
// and returns its bridge URL; it stops with the test, and its standard
// error is logged when the test failed. Without node and npm the test is
// skipped, except under CI=true, where it fails.
func StartBridgeApp(t testing.TB, key string) string {
	t.Helper()
	port := startNodeServer(t, BridgeAppDir, "app.mjs", "the bridge app", "NOVU_SECRET_KEY="+key, "NODE_ENV=production")
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/api/novu"
}

// startNodeServer runs script of the npm project dir (under the module's
// root; npm ci first) with PORT=0 and env, and returns the port it prints
// on its standard output as a JSON line {"port": N}. The process stops with
// the test, and its standard error (what names it in messages) is logged
// when the test failed. Without node and npm the test is skipped, except
// under CI=true, where it fails.
func startNodeServer(t testing.TB, dir, script, what string, env ...string) int {
	t.Helper()
	node, npm := RequireTool(t, "node"), RequireTool(t, "npm")
	abs, err := moduleDir(dir)
	if err != nil {
		t.Fatalf("finding %s: %v", dir, err)
	}
	NpmCI(t, npm, abs)
	cmd := exec.Command(node, script)
	cmd.Dir = abs
	cmd.Env = append(append(os.Environ(), "PORT=0"), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("starting %s: %v", what, err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", what, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", what, stderr.String())
		}
	})
	port := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var msg struct {
				Port int `json:"port"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Port != 0 {
				port <- msg.Port
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case p := <-port:
		return p
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not print its port within 20 s; stderr:\n%s", what, stderr.String())
		return 0
	}
}

// moduleDir is rel under the module's root (the nearest folder above the
// working directory holding go.mod).
func moduleDir(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(rel)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// lockedBuffer collects a process's output written from another goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
