package janitor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
)

// shutdownTimeout bounds the graceful stop of the HTTP servers.
const shutdownTimeout = 5 * time.Second

type runner struct {
	cfg      config.Config
	opts     Options
	client   kubernetes.Interface
	metrics  *Metrics
	policy   Policy
	current  atomic.Pointer[Controller] // the running controller while leading
	watchdog *leaderelection.HealthzAdaptor
}

func (r *runner) run(ctx context.Context) error {
	r.watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	stopServers, err := r.startServers()
	if err != nil {
		return err
	}
	defer stopServers()
	if !r.cfg.LeaderElection.Enabled {
		return r.lead(ctx)
	}
	return r.elect(ctx)
}

// lead runs one controller until ctx is done.
func (r *runner) lead(ctx context.Context) error {
	c, err := NewController(ControllerOptions{
		Client: r.client, Policy: r.policy, Clock: r.opts.Clock, Metrics: r.metrics, Logger: r.opts.Logger,
		DeletionsPerSec: r.cfg.DeletionsPerSec, Burst: r.cfg.Burst, Workers: r.cfg.Workers, DryRun: r.cfg.DryRun,
	})
	if err != nil {
		return err
	}
	r.current.Store(c)
	r.metrics.leader.Set(1)
	r.metrics.setCensus(c.census)
	defer func() { r.metrics.leader.Set(0); r.metrics.setCensus(nil); r.current.Store(nil) }()
	if r.opts.OnController != nil {
		r.opts.OnController(c)
	}
	r.opts.Logger.Info("janitor started", "identity", r.opts.Identity, "dryRun", r.cfg.DryRun, "ttl", r.cfg.TTL.String())
	return c.Run(ctx)
}

func (r *runner) elect(ctx context.Context) error {
	le := r.cfg.LeaderElection
	var (
		wg      sync.WaitGroup
		leadErr error
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: le.LeaseNamespace, Name: le.LeaseName},
			Client:     r.client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: r.opts.Identity},
		},
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            Component,
		WatchDog:        r.watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				wg.Go(func() { leadErr = r.lead(lctx) })
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return fmt.Errorf("janitor: leader election: %w", err)
	}
	r.opts.Logger.Info("waiting for the lease", "identity", r.opts.Identity, "lease", le.LeaseNamespace+"/"+le.LeaseName)
	elector.Run(ctx) // returns when ctx is done or the lease is lost
	wg.Wait()        // the controller has stopped: nothing is deleted after the lease is gone
	switch {
	case leadErr != nil:
		return leadErr
	case ctx.Err() == nil:
		return ErrLeaseLost
	}
	return nil
}

// ready: a standby replica is ready; the leader is ready once its cache has synced.
func (r *runner) ready(*http.Request) error {
	if c := r.current.Load(); c != nil && !c.Synced() {
		return errors.New("pod cache not synced")
	}
	return nil
}

func (r *runner) startServers() (stop func(), err error) {
	var servers []*http.Server
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		for _, s := range servers {
			_ = s.Shutdown(ctx)
		}
	}
	add := func(addr string, mux *http.ServeMux) error {
		if addr == "" || addr == "0" {
			return nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("janitor: listen %s: %w", addr, err)
		}
		s := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, s)
		go func() { _ = s.Serve(ln) }()
		return nil
	}
	if err := add(r.cfg.MetricsAddr, r.metricsMux()); err != nil {
		stop()
		return nil, err
	}
	if err := add(r.cfg.HealthProbeAddr, r.healthMux()); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

func (r *runner) metricsMux() *http.ServeMux {
	mux := http.NewServeMux()
	var g prometheus.Gatherer = r.opts.Registry
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if r.opts.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func (r *runner) healthMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, req *http.Request) {
		respond(w, r.watchdog.Check(req))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, req *http.Request) {
		respond(w, r.ready(req))
	})
	return mux
}

func respond(w http.ResponseWriter, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok"))
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
