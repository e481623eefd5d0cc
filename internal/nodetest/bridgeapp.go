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
	node, npm := RequireTool(t, "node"), RequireTool(t, "npm")
	dir, err := moduleDir(BridgeAppDir)
	if err != nil {
		t.Fatalf("finding %s: %v", BridgeAppDir, err)
	}
	NpmCI(t, npm, dir)
	cmd := exec.Command(node, "app.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NOVU_SECRET_KEY="+key, "PORT=0", "NODE_ENV=production")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("starting the bridge app: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the bridge app: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("bridge app stderr:\n%s", stderr.String())
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
		return "http://127.0.0.1:" + strconv.Itoa(p) + "/api/novu"
	case <-time.After(20 * time.Second):
		t.Fatalf("the bridge app did not print its port within 20 s; stderr:\n%s", stderr.String())
		return ""
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
