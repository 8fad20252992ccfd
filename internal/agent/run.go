package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Options are the dependencies Run would otherwise build itself; tests inject them.
type Options struct {
	RESTConfig *rest.Config         // nil: from cfg.Kubeconfig (or in-cluster)
	Clock      clock.WithTicker     // nil: the real clock
	Registry   *prometheus.Registry // nil: a new registry with the Go and process collectors
	Logger     *slog.Logger         // nil: JSON on stderr
	// OnListen, if set, is called with the bound metrics and health addresses.
	OnListen func(metrics, health string)
}

// Run runs the agent until ctx is done. A bad configuration is reported before anything is touched.
func Run(ctx context.Context, cfg Config) error { return RunWithOptions(ctx, cfg, Options{}) }

// RunWithOptions is Run with injected dependencies.
func RunWithOptions(ctx context.Context, cfg Config, opts Options) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	opts, err := opts.withDefaults(cfg)
	if err != nil {
		return err
	}
	layout, err := cgroupfs.Detector{Root: cfg.CgroupRoot}.Detect()
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	var kubelet *threshold.Config
	if cfg.KubeletConfigFile != "" {
		kc, err := loadKubeletFile(cfg.KubeletConfigFile)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		kubelet = &kc
	}
	rc := rest.CopyConfig(opts.RESTConfig)
	rc.Timeout = cfg.APITimeout
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("agent: client: %w", err)
	}
	metrics, err := NewMetrics(opts.Registry, cfg.Settings.Node)
	if err != nil {
		return err
	}
	r := &runner{cfg: cfg, opts: opts, client: client, metrics: metrics, layout: layout, log: opts.Logger}
	return r.run(ctx, kubelet)
}

func (o Options) withDefaults(cfg Config) (Options, error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
		o.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if o.RESTConfig == nil {
		rc, err := restConfig(cfg.Kubeconfig)
		if err != nil {
			return o, err
		}
		o.RESTConfig = rc
	}
	return o, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("agent: no --kubeconfig and not in a cluster: %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("agent: kubeconfig %s: %w", kubeconfig, err)
	}
	return rc, nil
}

// runner holds what Run builds.
type runner struct {
	cfg     Config
	opts    Options
	client  kubernetes.Interface
	metrics *Metrics
	layout  cgroupfs.Layout
	log     *slog.Logger
	breaker *Breaker
}

func (r *runner) run(ctx context.Context, kubelet *threshold.Config) error {
	node := r.cfg.Settings.Node
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr := &probes{clock: r.opts.Clock, maxSyncAge: 3*r.cfg.Settings.SyncPeriod + 30*time.Second}
	maddr, err := serve(ctx, r.cfg.MetricsAddr, metricsHandler(r.opts.Registry), &wg)
	if err != nil {
		return fmt.Errorf("agent: metrics server: %w", err)
	}
	haddr, err := serve(ctx, r.cfg.HealthAddr, pr.handler(), &wg)
	if err != nil {
		return fmt.Errorf("agent: health server: %w", err)
	}
	if r.opts.OnListen != nil {
		r.opts.OnListen(maddr, haddr)
	}
	if kubelet == nil {
		kc, err := retry(ctx, r, "kubelet /configz", func() (threshold.Config, error) { return fetchConfigz(ctx, r.client, node) })
		if err != nil {
			return err
		}
		kubelet = &kc
	}
	var params actuate.AvoidanceWriter
	if ns := r.cfg.AvoidanceNamespace; ns != "" && r.cfg.LoopBreaker {
		params = &actuate.AvoidanceParams{Client: r.client, Namespace: ns, Prefix: r.cfg.AvoidancePrefix, Node: node,
			DryRun: r.cfg.Settings.DryRun}
	}
	ledger, err := retry(ctx, r, "ledger", func() (*actuate.PersistentLedger, error) {
		store := &actuate.NodeAnnotationStore{Client: r.client, Node: node, DryRun: r.cfg.Settings.DryRun}
		return actuate.LoadLedger(ctx, store, r.cfg.Ledger, params)
	})
	if err != nil {
		return err
	}
	rec, stopEvents := actuate.NewEventRecorder(ctx, r.client, r.opts.Clock, node)
	defer stopEvents()
	events := &actuate.Events{Recorder: rec, Node: node}
	w := newWakers(r.layout, r.opts.Clock, r.log, func() { r.metrics.errors.WithLabelValues(stageNotify).Inc() })
	informer, err := newPodInformer(r.client, node, 0, func() { wake(w.ch) })
	if err != nil {
		return err
	}
	defer informer.Shutdown()
	pr.podsSynced = informer.Synced
	if !informer.Start(ctx) {
		return ctx.Err()
	}
	a := r.agent(*kubelet, ledger, events, informer, w, pr)
	started := w.start(ctx, r.cfg.Notifiers, r.cfg.ProcRoot)
	r.log.Info("pressure-agent started", "node", node, "policy", a.Settings.Policy, "dry_run", a.Settings.DryRun,
		"cgroup", r.layout.String(), "notifiers", started, "thresholds", len(kubelet.Thresholds),
		"metrics", maddr, "health", haddr)
	err = a.Loop(ctx)
	r.release()
	return err
}

// release removes the loop breaker's taint on the way out (best effort, 5 s).
func (r *runner) release() {
	if r.breaker == nil || r.cfg.Settings.DryRun {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.breaker.Release(ctx); err != nil {
		r.log.Warn("remove taint on shutdown", "err", err)
	}
}

func (r *runner) agent(kc threshold.Config, ledger *actuate.PersistentLedger, events *actuate.Events,
	pods podLister, w *wakers, pr *probes) *Agent {
	cfg := r.cfg
	var killer actuate.PodKiller
	if cfg.Ladder.AllowCgroupKill && !cfg.Settings.DryRun {
		killer = &actuate.CgroupKiller{Root: cfg.CgroupRoot, Pods: r.layout.PodsCgroup}
	}
	ladder := &actuate.Ladder{Evictor: &actuate.Evictor{Client: r.client}, Killer: killer, Events: events,
		Ledger: ledger, Clock: r.opts.Clock, Config: cfg.Ladder}
	var breaker loopBreaker
	if cfg.LoopBreaker {
		r.breaker = &Breaker{Ledger: ledger, Events: events, Hysteresis: cfg.TaintHysteresis,
			Tainter: &actuate.Tainter{Client: r.client, Node: cfg.Settings.Node, Key: cfg.TaintKey, DryRun: cfg.Settings.DryRun}}
		breaker = r.breaker
	}
	src := &source.Node{Proc: procfs.NewReader(cfg.ProcRoot), Cgroup: &cgroupfs.Reader{Layout: r.layout}}
	if _, err := os.Stat(cfg.NodefsPath); cfg.NodefsPath != "" && err != nil {
		r.log.Warn("disk signals not observed", "nodefsPath", cfg.NodefsPath, "err", err)
	} else if cfg.NodefsPath != "" {
		src.Disk = &statfs.Reader{NodefsPath: cfg.NodefsPath, ImagefsPath: cfg.ImagefsPath, Statfser: statfs.Unix{}}
	}
	return &Agent{
		Settings: cfg.Settings, KubeletConfig: kc, Clock: r.opts.Clock, Source: src, Pods: pods,
		Ladder: ladder, Killer: killer, Events: events, Breaker: breaker, Metrics: r.metrics, Log: r.log,
		Wake: w.ch, Rearm: w.rearm, Synced: pr.synced,
	}
}

// retry calls f until it succeeds or ctx is done, backing off from 1s to 30s and logging each failure.
func retry[T any](ctx context.Context, r *runner, what string, f func() (T, error)) (T, error) {
	b := backoff{Min: r.cfg.Settings.APIBackoffMin, Max: r.cfg.Settings.APIBackoffMax}
	for {
		v, err := f()
		if err == nil {
			return v, nil
		}
		d := b.fail(r.opts.Clock.Now())
		r.log.Warn("retrying", "what", what, "in", d, "err", err)
		select {
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("agent: %s: %w (last error: %w)", what, ctx.Err(), err)
		case <-r.opts.Clock.After(d):
		}
	}
}

// wake sends a wake-up without blocking.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
