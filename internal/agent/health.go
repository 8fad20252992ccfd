package agent

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

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
