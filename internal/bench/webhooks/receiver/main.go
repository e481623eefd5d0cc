// Command receiver is the fast local webhook endpoint of
// internal/bench/webhooks/run.sh: it answers every POST 204 at once,
// counts the events by type and distinct webhook-id, and serves the
// counts as JSON at GET /stats. It prints its base URL on standard output.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	var mu sync.Mutex
	requests, byType, ids := 0, map[string]int{}, map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			Type string `json:"type"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		requests++
		if id := r.Header.Get("webhook-id"); !ids[id] {
			ids[id] = true
			byType[ev.Type]++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"requests": requests, "distinct": len(ids), "byType": byType})
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
