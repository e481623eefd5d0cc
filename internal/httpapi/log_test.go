package httpapi_test

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// logBuffer collects a test server's log so tests can assert what it never contains.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var testLogs sync.Map // testing.TB -> *logBuffer

func testLogger(t testing.TB) *slog.Logger {
	b := &logBuffer{}
	testLogs.Store(t, b)
	t.Cleanup(func() { testLogs.Delete(t) })
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// logsOf returns what the harness of t has logged.
func logsOf(t testing.TB) string {
	if b, ok := testLogs.Load(t); ok {
		return b.(*logBuffer).String()
	}
	return ""
}
