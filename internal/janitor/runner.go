package janitor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/avoidwebhook"
	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/daemon"
)

type runner struct {
	cfg      config.Config
	opts     Options
	client   kubernetes.Interface
	metrics  *Metrics
	policy   Policy
	current  atomic.Pointer[Controller] // the running controller while leading
	watchdog *leaderelection.HealthzAdaptor
	avoid    *avoidwebhook.Params // the avoidance webhook's parameters; nil when it is not served
}

func (r *runner) run(ctx context.Context) error {
	r.watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	// The servers stop when run returns (after the controller), not as soon as ctx is done.
	var wg sync.WaitGroup
	defer wg.Wait()
	sctx, stopServers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServers()
	if err := r.startServers(sctx, &wg); err != nil {
		return err
	}
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

// ready: a standby replica is ready; the leader is ready once its cache has synced; with the
// avoidance webhook, every replica once its ConfigMaps have synced (the webhook's Service routes to
// ready replicas only).
func (r *runner) ready(*http.Request) error {
	if c := r.current.Load(); c != nil && !c.Synced() {
		return errors.New("pod cache not synced")
	}
	if r.avoid != nil {
		return r.avoid.Ready()
	}
	return nil
}

// startServers serves the avoidance webhook (first: the readiness probe reads r.avoid), /metrics and
// the probes until ctx is done.
func (r *runner) startServers(ctx context.Context, wg *sync.WaitGroup) error {
	if err := r.startAvoidanceWebhook(ctx, wg); err != nil {
		return err
	}
	if _, err := daemon.Serve(ctx, r.cfg.MetricsAddr, daemon.MetricsHandler(r.opts.Registry, r.opts.Profiling), wg); err != nil {
		return fmt.Errorf("janitor: %w", err)
	}
	if _, err := daemon.Serve(ctx, r.cfg.HealthProbeAddr, r.healthMux(), wg); err != nil {
		return fmt.Errorf("janitor: %w", err)
	}
	return nil
}

// startAvoidanceWebhook serves the avoidance webhook on every replica, leader or not, until ctx is done.
func (r *runner) startAvoidanceWebhook(ctx context.Context, wg *sync.WaitGroup) error {
	aw := r.cfg.AvoidanceWebhook
	if !aw.Enabled() {
		return nil
	}
	cert := &avoidwebhook.Certificate{CertFile: aw.CertFile, KeyFile: aw.KeyFile}
	if _, err := cert.Load(); err != nil {
		return fmt.Errorf("janitor: avoidance webhook: %w", err)
	}
	params := avoidwebhook.NewParams(r.client, aw.Namespace)
	addr, err := daemon.ServeTLS(ctx, aw.Addr, avoidwebhook.Handler(params.List, r.opts.Logger), cert.TLSConfig(), wg)
	if err != nil {
		return fmt.Errorf("janitor: avoidance webhook: %w", err)
	}
	r.avoid = params
	params.Start(ctx)
	wg.Go(func() {
		<-ctx.Done()
		params.Shutdown()
	})
	if r.opts.OnWebhook != nil {
		r.opts.OnWebhook(addr)
	}
	r.opts.Logger.Info("avoidance webhook serving", "address", addr, "namespace", aw.Namespace)
	return nil
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
