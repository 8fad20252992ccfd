package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"
)

// probes answers /healthz (the loop is alive: a sync completed within MaxSyncAge) and /readyz (the pod
// cache has synced and a sync has observed the node).
type probes struct {
	clock      clock.PassiveClock
	maxSyncAge time.Duration
	podsSynced func() bool

	mu       sync.Mutex
	lastSync time.Time
	observed bool
}

// setPodsSynced gives readyz the pod cache's synced check once the cache exists (the probes serve
// before it does).
func (p *probes) setPodsSynced(f func() bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podsSynced = f
}

// synced records a completed sync.
func (p *probes) synced(r syncResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastSync = p.clock.Now()
	p.observed = p.observed || r.Observed
}

func (p *probes) healthz() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastSync.IsZero() {
		return nil // starting: liveness must not kill an agent still waiting for the API
	}
	if age := p.clock.Since(p.lastSync); age > p.maxSyncAge {
		return fmt.Errorf("last sync %s ago, more than %s", age.Round(time.Millisecond), p.maxSyncAge)
	}
	return nil
}

func (p *probes) readyz() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.podsSynced != nil && !p.podsSynced():
		return errors.New("pod cache not synced")
	case !p.observed:
		return errors.New("node not observed yet")
	}
	return nil
}

func (p *probes) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", check(p.healthz))
	mux.HandleFunc("/readyz", check(p.readyz))
	return mux
}

func check(f func() error) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if err := f(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	}
}

func metricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return mux
}

// serve listens on addr ("" or "0" disables) and serves h until ctx is done. It returns the bound
// address (useful with port 0) or an error if it cannot listen.
func serve(ctx context.Context, addr string, h http.Handler, wg *sync.WaitGroup) (string, error) {
	if addr == "" || addr == "0" {
		return "", nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln)
	}()
	go func() {
		defer wg.Done()
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), nil
}
