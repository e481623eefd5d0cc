package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveDebug serves Go's profiler on its own listener (--debug-addr), never
// on the API's port: it is for operators on the host, off by default. It
// serves the metrics there too (metrics, when not nil), without the
// metrics token: whoever reaches this listener reads the profiles anyway.
// It returns the address it listens on.
func serveDebug(ctx context.Context, addr string, log *slog.Logger, metrics http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Info("profiler listening", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), nil
}
