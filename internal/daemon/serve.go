package daemon

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ShutdownTimeout bounds the graceful stop of an HTTP server.
const ShutdownTimeout = 5 * time.Second

// Serve listens on addr ("" or "0" disables) and serves h until ctx is done, then shuts the server
// down gracefully; wg counts its goroutines. It returns the bound address (useful with port 0), or an
// error if it cannot listen.
func Serve(ctx context.Context, addr string, h http.Handler, wg *sync.WaitGroup) (string, error) {
	return ServeTLS(ctx, addr, h, nil, wg)
}

// ServeTLS is Serve over TLS with tlsConfig (which must provide the certificate); nil serves plain HTTP.
func ServeTLS(ctx context.Context, addr string, h http.Handler, tlsConfig *tls.Config, wg *sync.WaitGroup) (string, error) {
	if addr == "" || addr == "0" {
		return "", nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, TLSConfig: tlsConfig}
	wg.Add(2)
	go func() {
		defer wg.Done()
		if tlsConfig != nil {
			_ = srv.ServeTLS(ln, "", "")
			return
		}
		_ = srv.Serve(ln)
	}()
	go func() {
		defer wg.Done()
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), nil
}

// MetricsHandler serves g on /metrics and, with profiling, Go's net/http/pprof under /debug/pprof/.
func MetricsHandler(g prometheus.Gatherer, profiling bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// NewRegistry is a daemon's default registry: the Go and process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
