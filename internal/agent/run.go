package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/cgroupkill"
	"github.com/kube-pressure/pressure/internal/daemon"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/reclaim"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/podfs"
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
	Profiling  bool                 // serve net/http/pprof under /debug/pprof/ on the metrics address
	// OnListen, if set, is called with the bound metrics and health addresses.
	OnListen func(metrics, health string)
}

// RunWithOptions runs the agent until ctx is done, with the dependencies opts injects (the rest built
// from cfg). A bad configuration is reported before anything is touched.
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
	if err := preflight(ctx, cfg, opts); err != nil {
		return err
	}
	var kubelet *threshold.Config
	var kf *kubeletFile // kept for the refresher, which then parses the file only once it changed
	if cfg.KubeletConfigFile != "" {
		kf = &kubeletFile{Path: cfg.KubeletConfigFile}
		kc, err := kf.Load()
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		kubelet = &kc
	}
	client, err := newClient(opts.RESTConfig, cfg.APITimeout)
	if err != nil {
		return err
	}
	metrics, err := NewMetrics(opts.Registry, cfg.Settings.Node)
	if err != nil {
		return err
	}
	r := &runner{cfg: cfg, opts: opts, client: client, metrics: metrics, layout: layout, log: opts.Logger, kubeletFile: kf}
	return r.run(ctx, kubelet)
}

// newClient is the agent's clientset, every request bounded by timeout.
func newClient(rc *rest.Config, timeout time.Duration) (kubernetes.Interface, error) {
	c, err := kubernetes.NewForConfig(withAPIDeadline(rc, timeout))
	if err != nil {
		return nil, fmt.Errorf("agent: client: %w", err)
	}
	return c, nil
}

func (o Options) withDefaults(cfg Config) (Options, error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if o.Registry == nil {
		o.Registry = daemon.NewRegistry()
	}
	if o.RESTConfig == nil {
		rc, err := daemon.RESTConfig(cfg.Kubeconfig)
		if err != nil {
			return o, fmt.Errorf("agent: %w", err)
		}
		o.RESTConfig = rc
	}
	return o, nil
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
	// kubeletFile is the kubelet config file as read at start (nil: /configz).
	kubeletFile *kubeletFile
}

func (r *runner) run(ctx context.Context, kubelet *threshold.Config) error {
	node := r.cfg.Settings.Node
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr := &probes{clock: r.opts.Clock, maxSyncAge: 3*r.cfg.Settings.SyncPeriod + 30*time.Second}
	maddr, err := daemon.Serve(ctx, r.cfg.MetricsAddr, daemon.MetricsHandler(r.opts.Registry, r.opts.Profiling), &wg)
	if err != nil {
		return fmt.Errorf("agent: metrics server: %w", err)
	}
	haddr, err := daemon.Serve(ctx, r.cfg.HealthAddr, pr.handler(), &wg)
	if err != nil {
		return fmt.Errorf("agent: health server: %w", err)
	}
	if r.opts.OnListen != nil {
		r.opts.OnListen(maddr, haddr)
	}
	// Nothing below waits for the API server: an agent started while it is down runs its loop at once on
	// what it can read on the node, and picks up /configz, the ledger and the pod list as they come.
	kc, kubeletFromAPI := r.initialKubelet(ctx, kubelet)
	var params loopbreaker.AvoidanceWriter
	if ns := r.cfg.AvoidanceNamespace; ns != "" && r.cfg.LoopBreaker {
		params = &loopbreaker.AvoidanceParams{Client: r.client, Namespace: ns, Prefix: r.cfg.AvoidancePrefix, Node: node,
			DryRun: r.cfg.Settings.DryRun}
	}
	store := &loopbreaker.NodeAnnotationStore{Client: r.client, Node: node, DryRun: r.cfg.Settings.DryRun}
	ledger := loopbreaker.NewPendingLedger(store, r.cfg.Ledger, params)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := retry(ctx, r, "ledger", func() (struct{}, error) { return struct{}{}, ledger.Load(ctx) }); err == nil {
			r.warnUnreadableLedger(ledger)
		}
	}()
	rec, stopEvents := actuate.NewEventRecorder(ctx, r.client, r.opts.Clock, node)
	defer stopEvents()
	events := &actuate.Events{Recorder: rec, Node: node}
	w := newWakers(r.layout, r.cfg.ProcRoot, r.opts.Clock, r.log, func() { r.metrics.errors.WithLabelValues(stageNotify).Inc() })
	w.armed = r.metrics.setArmed
	informer, err := newPodInformer(r.client, node, 0, func() { wake(w.ch) })
	if err != nil {
		return err
	}
	defer informer.Shutdown()
	pr.setPodsSynced(informer.Synced)
	informer.Start(ctx)
	a := r.agent(kc, ledger, events, informer, w, pr)
	a.PodsSynced = informer.Synced
	images := &nodeImageCache{client: r.client, node: node, clock: r.opts.Clock,
		onErr: func(err error) { r.log.Warn("read the node's images (reclaim estimate)", "node", node, "err", err) }}
	a.Images = images
	a.KubeletVersion = images.KubeletVersion
	wg.Add(1)
	go func() {
		defer wg.Done()
		images.run(ctx)
	}()
	if k := r.kubeletRefresher(kubelet == nil, kubeletFromAPI); k != nil {
		a.KubeletUpdates = k.Updates
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.run(ctx, kc)
		}()
	}
	armed, failed := splitNotifiers(w.start(ctx, r.cfg.Notifiers))
	r.log.Info("pressure-agent started", "node", node, "policy", a.Settings.Policy, "dry_run", a.Settings.DryRun,
		"cgroup", r.layout.String(), "notifiers", armed, "notifiers_not_armed", failed, "thresholds", len(kc.Thresholds),
		"metrics", maddr, "health", haddr)
	if len(failed) > 0 {
		r.log.Warn("notifiers not armed: wake-ups rely on the armed ones and the periodic sync", "node", node,
			"not_armed", failed, "armed", armed)
	}
	err = a.SyncLoop(ctx)
	r.release()
	return err
}

// splitNotifiers formats the armed notifiers and those that failed, with why.
func splitNotifiers(st []notifierStatus) (armed, failed []string) {
	armed, failed = []string{}, []string{}
	for _, s := range st {
		if s.Err != nil {
			failed = append(failed, s.String())
		} else {
			armed = append(armed, s.String())
		}
	}
	return armed, failed
}

// warnUnreadableLedger says once, at start, that the node's ledger annotation could not be read and
// what the agent does about it.
func (r *runner) warnUnreadableLedger(l *loopbreaker.PersistentLedger) {
	u := l.Unreadable()
	if u == nil {
		return
	}
	then := "starting with an empty ledger; the annotation is replaced at the next eviction"
	if u.Newer {
		then = "starting with an empty ledger kept in memory only; the annotation is left as it is for the newer agent"
	}
	r.log.Warn("ledger annotation unreadable: "+then, "node", r.cfg.Settings.Node, "annotation", loopbreaker.LedgerAnnotation,
		"value", truncate(u.Value, 1024), "err", u.Err)
	r.metrics.errors.WithLabelValues(stageLedger).Inc()
}

// truncate shortens s to at most n bytes, saying how long it was.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:n], len(s))
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

func (r *runner) agent(kc threshold.Config, ledger *loopbreaker.PersistentLedger, events *actuate.Events,
	pods podLister, w *wakers, pr *probes) *Agent {
	cfg := r.cfg
	var killer actuate.PodKiller
	if cfg.Ladder.AllowCgroupKill && !cfg.Settings.DryRun {
		killer = &cgroupkill.Killer{Layout: r.layout}
	}
	ladder := &actuate.Ladder{Evictor: &actuate.Evictor{Client: r.client}, Killer: killer, Events: events,
		Ledger: ledger, Clock: r.opts.Clock, Config: cfg.Ladder}
	var breaker loopBreaker
	if cfg.LoopBreaker {
		r.breaker = &Breaker{Ledger: ledger, Events: events,
			Tainter: &loopbreaker.Tainter{Client: r.client, Node: cfg.Settings.Node, Key: cfg.TaintKey, DryRun: cfg.Settings.DryRun}}
		breaker = r.breaker
	}
	src := &source.Node{Proc: procfs.NewReader(cfg.ProcRoot), Cgroup: &cgroupfs.Reader{Layout: r.layout}}
	if _, err := os.Stat(cfg.NodefsPath); cfg.NodefsPath != "" && err != nil {
		r.log.Warn("disk signals not observed", "nodefsPath", cfg.NodefsPath, "err", err)
	} else if cfg.NodefsPath != "" {
		src.Disk = &statfs.Reader{NodefsPath: cfg.NodefsPath, ImagefsPath: cfg.ImagefsPath, Statfser: statfs.Unix{}}
		src.PodFS = r.podFS()
	}
	var unlisted func() ([]UnlistedPod, error)
	if killer != nil {
		unlisted = unlistedLister(r.layout, procfs.NewReader(cfg.ProcRoot))
	}
	var reclaimer podReclaimer
	if action := cfg.Settings.Config.Reclaim.Action; action.Enabled && !cfg.Settings.DryRun {
		reclaimer = reclaim.NewPods(r.layout, action.MaxBytes, action.MinInterval)
	}
	return &Agent{
		Settings: cfg.Settings, KubeletConfig: kc, Clock: r.opts.Clock, Source: src, Pods: pods, Unlisted: unlisted,
		Ladder: ladder, Killer: killer, Reclaimer: reclaimer, Events: events, Breaker: breaker, Ledger: ledger, Metrics: r.metrics, Log: r.log,
		Wake: w.ch, Rearm: w.rearm, Deciding: w.deciding.Store, Synced: pr.synced,
	}
}

// podFS returns the per-pod disk usage reader, or nil, said once, when the kubelet's pods directory is
// not visible (the chart's default mounts an empty directory as kubeletRootDir: statfs only; the chart's
// agent.podDiskUsage mounts the pods directory as PodsDir): the pods' disk usage is then not measured,
// and the policy evicts no pod for a disk signal (the kubelet stays the backstop).
func (r *runner) podFS() *podfs.Reader {
	pods := r.cfg.PodsDir
	if pods == "" {
		pods = filepath.Join(r.cfg.NodefsPath, "pods")
	}
	if _, err := os.Stat(pods); err != nil {
		r.log.Warn("per-pod disk usage not measured: the kubelet's pods directory is not visible; the agent evicts no pod "+
			"for disk pressure (the kubelet does)", "path", pods, "err", err)
		return nil
	}
	return &podfs.Reader{KubeletRootDir: r.cfg.NodefsPath, PodsDir: r.cfg.PodsDir, PodLogsDir: r.cfg.PodLogsDir, Limits: r.cfg.PodDiskWalk,
		OnPartial: func(uid, why string) {
			r.metrics.errors.WithLabelValues(stageDiskWalk).Inc()
			r.log.Warn("pod disk usage is a lower bound: the walk of its volumes and logs stopped at its limit", "pod", uid, "limit", why)
		}}
}

// retry calls f until it succeeds or ctx is done, backing off from 1s to 30s and logging each failure.
func retry[T any](ctx context.Context, r *runner, what string, f func() (T, error)) (T, error) {
	b := backoff{Min: r.cfg.Settings.APIBackoffMin, Max: r.cfg.Settings.APIBackoffMax}
	for {
		v, err := f()
		if err == nil {
			return v, nil
		}
		d := b.fail()
		r.log.Warn("retrying", "what", what, "in", d, "err", err)
		select {
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("agent: %s: %w (last error: %w)", what, ctx.Err(), err)
		case <-r.opts.Clock.After(d):
		}
	}
}

// backoff is an exponential backoff between Min and Max.
type backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// fail doubles the delay (starting at Min) and returns it.
func (b *backoff) fail() time.Duration {
	switch {
	case b.cur == 0:
		b.cur = b.Min
	default:
		b.cur = min(2*b.cur, b.Max)
	}
	return b.cur
}

// wake sends a wake-up without blocking.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
