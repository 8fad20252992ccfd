package agent

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Notifiers selects the wake-up mechanisms. They only trigger syncs.
type Notifiers struct {
	// Memcg arms cgroup v1 memory threshold notifications on the memory root and the pods cgroup.
	Memcg bool
	// PSI arms a node-wide memory PSI trigger (/proc/pressure/memory, some 200ms per 2s).
	PSI bool
	// MemoryEvents watches the cgroup v2 pods cgroup's memory.events with inotify.
	MemoryEvents bool
	// PollInterval reads allocatable memory this often and wakes on a threshold crossing or a change of
	// PollDelta bytes; 0 disables the poll.
	PollInterval time.Duration
	PollDelta    int64
}

// DefaultNotifiers turns every mechanism on with a 100 ms poll and a 32Mi delta.
var DefaultNotifiers = Notifiers{Memcg: true, PSI: true, MemoryEvents: true, PollInterval: 100 * time.Millisecond, PollDelta: 32 << 20}

// rearmEvery is how often memcg thresholds are re-armed at the latest (the kubelet: 10 s).
const rearmEvery = 10 * time.Second

// wakers runs the notifiers and keeps their thresholds at the agent's.
type wakers struct {
	layout cgroupfs.Layout
	clock  clock.WithTicker
	log    *slog.Logger
	onErr  func()
	ch     chan struct{}

	mu    sync.Mutex
	memcg map[signal.Signal]*armed
	// pollThreshold is the resolved allocatableMemory.available threshold for the poller.
	pollThreshold atomic.Int64
}

type armed struct {
	n       *notify.MemcgThreshold
	rel     string // cgroup relative to the memory root ("" = root)
	value   uint64
	armedAt time.Time
}

func newWakers(l cgroupfs.Layout, clk clock.WithTicker, log *slog.Logger, onErr func()) *wakers {
	w := &wakers{layout: l, clock: clk, log: log, onErr: onErr, ch: make(chan struct{}, 1), memcg: map[signal.Signal]*armed{}}
	w.pollThreshold.Store(math.MinInt64)
	return w
}

// start starts the mechanisms n enables that work on this host, each in its own goroutine, and returns
// what it started (for the log).
func (w *wakers) start(ctx context.Context, n Notifiers, procRoot string) []string {
	var started []string
	if n.Memcg && w.layout.Version == cgroupfs.V1 {
		started = append(started, w.startMemcg(ctx)...)
	}
	if n.PSI {
		p := filepath.Join(procRoot, "pressure", "memory")
		if t, err := notify.ArmPSI(p, "some", 200*time.Millisecond, 2*time.Second); err != nil {
			w.log.Info("psi notifier unavailable", "err", err)
		} else {
			started = append(started, "psi("+p+")")
			go w.run(ctx, "psi", t.Run)
		}
	}
	if n.MemoryEvents && w.layout.Version == cgroupfs.V2 && w.layout.Driver != cgroupfs.DriverNone {
		p := filepath.Join(w.layout.Memory, w.layout.PodsCgroup, "memory.events")
		if fw, err := notify.WatchFile(p); err != nil {
			w.log.Info("memory.events notifier unavailable", "err", err)
		} else {
			started = append(started, "memory-events("+p+")")
			go w.run(ctx, "memory-events", fw.Run)
		}
	}
	if n.PollInterval > 0 {
		started = append(started, "poll("+n.PollInterval.String()+")")
		go w.run(ctx, "poll", w.poller(n).Run)
	}
	return started
}

func (w *wakers) startMemcg(ctx context.Context) []string {
	type target struct {
		sig signal.Signal
		rel string
	}
	targets := []target{{signal.MemoryAvailable, ""}}
	if w.layout.Driver != cgroupfs.DriverNone {
		targets = append(targets, target{signal.AllocatableMemoryAvailable, w.layout.PodsCgroup})
	}
	var started []string
	for _, tg := range targets {
		sig, rel := tg.sig, tg.rel
		dir := filepath.Join(w.layout.Memory, rel)
		n, err := notify.NewMemcgThreshold(dir)
		if err != nil {
			w.log.Info("memcg notifier unavailable", "cgroup", dir, "err", err)
			continue
		}
		w.mu.Lock()
		w.memcg[sig] = &armed{n: n, rel: rel}
		w.mu.Unlock()
		started = append(started, "memcg("+dir+")")
		go w.run(ctx, "memcg", n.Run)
	}
	return started
}

func (w *wakers) run(ctx context.Context, name string, run func(context.Context, chan<- struct{}) error) {
	if err := run(ctx, w.ch); err != nil {
		w.log.Warn("notifier stopped", "notifier", name, "err", err)
		w.onErr()
	}
}

// poller reads allocatableMemory.available (memory.available without a pods cgroup) minus the agent's
// threshold, so a crossing of 0 is a crossing of the threshold.
func (w *wakers) poller(n Notifiers) *notify.Poller {
	r := &cgroupfs.Reader{Layout: w.layout}
	return &notify.Poller{
		Interval: n.PollInterval, Delta: n.PollDelta, Threshold: 0, Clock: w.clock,
		Read: func() (int64, error) {
			o, err := r.AllocatableMemory(w.clock.Now())
			if err != nil {
				return 0, err
			}
			thr := w.pollThreshold.Load()
			if thr == math.MinInt64 {
				return math.MaxInt64, nil
			}
			return o.Available - thr, nil
		},
	}
}

// rearm points the notifiers at the agent's current thresholds; it runs after every sync. A memcg
// threshold is re-armed when its value moved by more than 1Mi or every rearmEvery.
func (w *wakers) rearm(cfg threshold.Config, snap signal.Snapshot) {
	first := firstCrossed(cfg, snap.Observations)
	if id, ok := first[signal.AllocatableMemoryAvailable]; ok {
		o := snap.Observations[signal.AllocatableMemoryAvailable]
		w.pollThreshold.Store(cfg.Thresholds[id].Value.Resolve(o.Capacity))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	for sig, a := range w.memcg {
		id, ok := first[sig]
		o, seen := snap.Observations[sig]
		if !ok || !seen {
			continue
		}
		m, err := w.layout.ReadMemory(a.rel)
		if err != nil {
			w.onErr()
			continue
		}
		v, ok := notify.UsageThreshold(uint64(o.Capacity), uint64(max(0, cfg.Thresholds[id].Value.Resolve(o.Capacity))), m.InactiveFile)
		if !ok || (absDiff(v, a.value) <= 1<<20 && now.Sub(a.armedAt) < rearmEvery) {
			continue
		}
		if err := a.n.SetThreshold(v); err != nil {
			w.log.Warn("arm memcg threshold", "signal", sig, "err", err)
			w.onErr()
			continue
		}
		a.value, a.armedAt = v, now
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
