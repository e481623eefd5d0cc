package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeBridge is a Novu Framework bridge on loopback that answers discover
// with the real app's answer (internal/bridge/testdata, captured from
// @novu/framework 2.13.2) and checks every call's novu-signature against
// key, as the framework does; its discover answer can be replaced.
type fakeBridge struct {
	*httptest.Server
	key      string
	discover atomic.Pointer[string]
	calls    atomic.Int64
}

func newFakeBridge(t *testing.T, key string) *fakeBridge {
	t.Helper()
	raw, err := os.ReadFile("../bridge/testdata/discover-framework-2.13.2.json")
	require.NoError(t, err)
	b := &fakeBridge{key: key}
	d := string(raw)
	b.discover.Store(&d)
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

// URL is the bridge's endpoint, as apps serve it.
func (b *fakeBridge) URL() string { return b.Server.URL + "/api/novu" }

func (b *fakeBridge) serve(w http.ResponseWriter, r *http.Request) {
	b.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	ts, v1, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("novu-signature"), "t="), ",v1=")
	mac := hmac.New(sha256.New, []byte(b.key))
	mac.Write([]byte(ts + ".{}"))
	if r.Method != http.MethodGet || !hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil)))) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Signature does not match the expected signature. Please ensure the signature provided` +
			` in the \"novu-signature\" header is correct and try again.","code":"SignatureMismatchError","data":{}}`))
		return
	}
	switch r.URL.Query().Get("action") {
	case "discover":
		_, _ = w.Write([]byte(*b.discover.Load()))
	case "health-check":
		_, _ = w.Write([]byte(`{"status":"ok","sdkVersion":"2.13.2","frameworkVersion":"2.13.2","discovered":{"workflows":4,"steps":8}}`))
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"message":"unknown action","code":"MethodNotAllowedError","data":{}}`))
	}
}
