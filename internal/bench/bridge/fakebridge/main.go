// Command fakebridge is a Novu Framework bridge for the benchmark of
// code-first workflows (internal/bench/bridge/run.sh): it lists one
// workflow, bench-bridge, with one in-app step, and answers each execute
// after -delay (a bridge's own work and network), checking every call's
// novu-signature as the framework does. It listens on loopback only.
package main

import (
	"crypto/hmac"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/secret"
)

const discover = `{"workflows":[{"workflowId":"bench-bridge","severity":"none","tags":[],"steps":[{"stepId":"inbox","type":"in_app",` +
	`"controls":{"schema":{"type":"object","properties":{},"additionalProperties":true}},` +
	`"outputs":{"schema":{"type":"object","properties":{"body":{"type":"string"}},"required":["body"],"additionalProperties":false}},` +
	`"results":{"schema":{"type":"object","properties":{}}},"code":"","options":{},"providers":[]}],` +
	`"code":"","payload":{"schema":{"type":"object","additionalProperties":true}},"controls":{"schema":{"type":"object"}}}],"agents":[]}`

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to listen on")
	key := flag.String("key", "", "the environment's API key (the app's NOVU_SECRET_KEY)")
	delay := flag.Duration("delay", 50*time.Millisecond, "how long each execute takes")
	flag.Parse()
	if !strings.HasPrefix(*listen, "127.0.0.1:") {
		log.Fatal("fakebridge listens on 127.0.0.1 only")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s/api/novu\n", ln.Addr())
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		signed := body
		if r.Method == http.MethodGet {
			signed = []byte("{}")
		}
		sig := r.Header.Get("novu-signature")
		ts, _, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",")
		var ms int64
		_, _ = fmt.Sscan(ts, &ms)
		if !hmac.Equal([]byte(sig), []byte(secret.NovuSignature(*key, time.UnixMilli(ms), signed))) {
			http.Error(w, `{"message":"Signature does not match","code":"SignatureMismatchError","data":{}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("action") {
		case "discover":
			_, _ = io.WriteString(w, discover)
		case "health-check":
			_, _ = io.WriteString(w, `{"status":"ok","discovered":{"workflows":1,"steps":1}}`)
		case "execute", "preview":
			var in struct {
				Payload map[string]any `json:"payload"`
			}
			_ = json.Unmarshal(body, &in)
			time.Sleep(*delay)
			out, _ := json.Marshal(map[string]any{"outputs": map[string]any{"body": fmt.Sprintf("Order %v", in.Payload["order"])},
				"providers": map[string]any{}, "options": map[string]any{"skip": false},
				"metadata": map[string]any{"status": "success", "error": false, "duration": delay.Milliseconds()}})
			_, _ = w.Write(out)
		default:
			http.Error(w, `{"message":"unknown action"}`, http.StatusBadRequest)
		}
	})))
}
