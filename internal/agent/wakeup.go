package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// Notifiers selects the wake-up mechanisms. They only trigger syncs.
type Notifiers struct {
	// Memcg arms cgroup v1 memory threshold notifications on the memory root and the pods cgroup.
	Memcg bool
	// PSI arms a node-wide memory PSI trigger (/proc/pressure/memory): some stall of a tenth of
	// PSIWindow within PSIWindow (0: agentcfg.DefaultPSIWindow).
	PSI       bool
	PSIWindow time.Duration
	// MemoryEvents watches the cgroup v2 pods cgroup's memory.events with inotify.
	MemoryEvents bool
	// PollInterval reads the memory signals (allocatable and node-level) this often near a threshold
	// and wakes on a threshold crossing or a change of PollDelta bytes; 0 disables the poll.
	PollInterval time.Duration
	PollDelta    int64
	// PollMaxInterval and PollRampRate make the poll adaptive (notify.Poller): far from every
	// threshold it reads after margin / PollRampRate, at most PollMaxInterval.
	PollMaxInterval time.Duration
	PollRampRate    int64
}

// Notifier names: the label notifier of pressure_agent_notifier_armed.
const (
	notifierMemcg        = "memcg"
	notifierPSI          = "psi"
	notifierMemoryEvents = "memory.events"
	notifierPoll         = "poll"
)

// rearmEvery is how often memcg thresholds are re-armed at the latest (the kubelet: 10 s).
const rearmEvery = 10 * time.Second

// probeThreshold is the usage a memcg notifier is armed at when it starts, before the first sync gives
// it the agent's threshold: no cgroup reaches it, so it never fires, but arming it proves that
// cgroup.event_control can be written (a read-only mount cannot).
const probeThreshold = math.MaxInt64

// notifierStatus is whether one notifier armed at start and, if not, why.
type notifierStatus struct {
	Name  string // notifierMemcg, ...
	Where string // the file, cgroup or interval
	Err   error  // nil: armed
}

func (s notifierStatus) String() string {
	if s.Err != nil {
		return fmt.Sprintf("%s(%s): %v", s.Name, s.Where, s.Err)
	}
	return s.Name + "(" + s.Where + ")"
}

// wakers runs the notifiers and keeps their thresholds at the agent's.
type wakers struct {
	layout   cgroupfs.Layout
	procRoot string
	clock    clock.WithTicker
	log      *slog.Logger
	onErr    func()
	// armed records whether a notifier is armed (pressure_agent_notifier_armed); nil records nothing.
	armed func(name string, ok bool)
	ch    chan struct{}

	mu    sync.Mutex
	memcg map[signal.Signal]*armed
	// memTotal is MemTotal for the poll's memory.available (0: not read).
	memTotal uint64
	// pollThreshold is the resolved threshold of each polled signal, math.MinInt64 until the first sync.
	pollThreshold map[signal.Signal]*atomic.Int64
	// deciding is true from a sync's start to its decision (Agent.Deciding): the poll skips its reads.
	deciding atomic.Bool
}

type armed struct {
	n       *notify.MemcgThreshold
	rel     string // cgroup relative to the memory root ("" = root)
	value   uint64
	armedAt time.Time
	failing bool // the last SetThreshold failed (warned once)
}

func newWakers(l cgroupfs.Layout, procRoot string, clk clock.WithTicker, log *slog.Logger, onErr func()) *wakers {
	w := &wakers{layout: l, procRoot: procRoot, clock: clk, log: log, onErr: onErr, ch: make(chan struct{}, 1),
		memcg: map[signal.Signal]*armed{}, pollThreshold: map[signal.Signal]*atomic.Int64{}}
	for _, sig := range []signal.Signal{signal.MemoryAvailable, signal.AllocatableMemoryAvailable} {
		v := &atomic.Int64{}
		v.Store(math.MinInt64)
		w.pollThreshold[sig] = v
	}
	return w
}

func (w *wakers) setArmed(name string, ok bool) {
	if w.armed != nil {
		w.armed(name, ok)
	}
}

// start arms the mechanisms n enables that apply to this host (memcg on cgroup v1, memory.events on v2
// with a pods cgroup), each run in its own goroutine, and returns each one's status, armed or why not.
func (w *wakers) start(ctx context.Context, n Notifiers) []notifierStatus {
	var out []notifierStatus
	if n.Memcg && w.layout.Version == cgroupfs.V1 {
		out = append(out, w.startMemcg(ctx)...)
	}
	if n.PSI {
		p := filepath.Join(w.procRoot, "pressure", "memory")
		win := n.PSIWindow
		if win <= 0 {
			win = agentcfg.DefaultPSIWindow
		}
		t, err := notify.ArmPSI(p, "some", win/10, win)
		out = append(out, notifierStatus{Name: notifierPSI, Where: p, Err: err})
		if err == nil {
			go w.run(ctx, notifierPSI, t.Run)
		}
	}
	if n.MemoryEvents && w.layout.Version == cgroupfs.V2 && w.layout.Driver != cgroupfs.DriverNone {
		p := filepath.Join(w.layout.Memory, w.layout.PodsCgroup, "memory.events")
		fw, err := notify.WatchFile(p)
		out = append(out, notifierStatus{Name: notifierMemoryEvents, Where: p, Err: err})
		if err == nil {
			go w.run(ctx, notifierMemoryEvents, fw.Run)
		}
	}
	if n.PollInterval > 0 {
		p, smp, where, err := w.poller(n)
		out = append(out, notifierStatus{Name: notifierPoll, Where: where, Err: err})
		if err == nil {
			go w.run(ctx, notifierPoll, func(ctx context.Context, ch chan<- struct{}) error {
				defer smp.Close()
				return p.Run(ctx, ch)
			})
		}
	}
	// One series per notifier: memcg is armed when every cgroup it targets is.
	ok := map[string]bool{}
	for _, s := range out {
		prev, seen := ok[s.Name]
		ok[s.Name] = (prev || !seen) && s.Err == nil
	}
	for name, armed := range ok {
		w.setArmed(name, armed)
	}
	return out
}

func (w *wakers) startMemcg(ctx context.Context) []notifierStatus {
	type target struct {
		sig signal.Signal
		rel string
	}
	targets := []target{{signal.MemoryAvailable, ""}}
	if w.layout.Driver != cgroupfs.DriverNone {
		targets = append(targets, target{signal.AllocatableMemoryAvailable, w.layout.PodsCgroup})
	}
	var out []notifierStatus
	for _, tg := range targets {
		dir := filepath.Join(w.layout.Memory, tg.rel)
		n, err := notify.NewMemcgThreshold(dir)
		if err == nil {
			if err = n.SetThreshold(probeThreshold); err != nil {
				_ = n.Close()
			}
		}
		out = append(out, notifierStatus{Name: notifierMemcg, Where: dir, Err: err})
		if err != nil {
			continue
		}
		w.mu.Lock()
		w.memcg[tg.sig] = &armed{n: n, rel: tg.rel, value: probeThreshold}
		w.mu.Unlock()
		go w.run(ctx, notifierMemcg, n.Run)
	}
	return out
}

func (w *wakers) run(ctx context.Context, name string, run func(context.Context, chan<- struct{}) error) {
	if err := run(ctx, w.ch); err != nil {
		w.log.Warn("notifier stopped", "notifier", name, "err", err)
		w.setArmed(name, false)
		w.onErr()
	}
}

// poller reads the smallest margin of the polled memory signals to the agent's thresholds: the
// allocatable cgroup's (allocatableMemory.available) and the node's (memory.available, MemTotal − the
// root cgroup's working set, so that on cgroup v2, where no memcg notifier exists, the node-level
// signal is checked as fast as the allocatable one). A crossing of 0 is a crossing of a threshold. It
// fails when neither signal can be read. Its reads go through the returned sampler, which keeps the
// cgroup files open; the caller closes it when the poller stops.
func (w *wakers) poller(n Notifiers) (*notify.Poller, *cgroupfs.Sampler, string, error) {
	r := &cgroupfs.Reader{Layout: w.layout}
	now := w.clock.Now()
	var errs []error
	var polled []string
	if total, err := procfs.NewReader(w.procRoot).MemTotal(); err != nil {
		errs = append(errs, err)
	} else if _, err := r.NodeMemory(now, total); err != nil {
		errs = append(errs, err)
	} else {
		w.memTotal = total
		polled = append(polled, string(signal.MemoryAvailable))
	}
	allocOK := false
	if _, err := r.AllocatableMemory(now); err != nil {
		errs = append(errs, err)
	} else {
		allocOK = true
		polled = append(polled, string(signal.AllocatableMemoryAvailable))
	}
	where := fmt.Sprintf("%s every %s", polled, n.PollInterval)
	if n.PollMaxInterval > n.PollInterval && n.PollRampRate > 0 {
		where = fmt.Sprintf("%s every %s to %s (a fall of %dMi/s)", polled, n.PollInterval, n.PollMaxInterval, n.PollRampRate>>20)
	}
	if len(polled) == 0 {
		return nil, nil, fmt.Sprintf("every %s", n.PollInterval), errors.Join(errs...)
	}
	smp := r.NewSampler()
	read := func() (int64, error) {
		now := w.clock.Now()
		margin := int64(math.MaxInt64)
		var errs []error
		if thr := w.pollThreshold[signal.AllocatableMemoryAvailable].Load(); allocOK && thr != math.MinInt64 {
			if o, err := smp.AllocatableMemory(now); err != nil {
				errs = append(errs, err)
			} else {
				margin = min(margin, o.Available-thr)
			}
		}
		if thr := w.pollThreshold[signal.MemoryAvailable].Load(); w.memTotal > 0 && thr != math.MinInt64 {
			if o, err := smp.NodeMemory(now, w.memTotal); err != nil {
				errs = append(errs, err)
			} else {
				margin = min(margin, o.Available-thr)
			}
		}
		if margin == math.MaxInt64 && len(errs) > 0 {
			return 0, errors.Join(errs...)
		}
		return margin, nil
	}
	return &notify.Poller{Interval: n.PollInterval, MaxInterval: n.PollMaxInterval, RampRate: n.PollRampRate,
		Delta: n.PollDelta, Threshold: 0, Clock: w.clock, Read: read, Paused: w.deciding.Load,
		OnError: func(error) { w.onErr() }}, smp, where, nil
}

// rearm points the notifiers at the thresholds the policy watches; it runs after every sync. A memcg
// threshold is re-armed when its value moved by more than 1Mi or every rearmEvery. A memcg threshold that
// cannot be armed is warned about once, when it starts failing, not at every sync.
func (w *wakers) rearm(watch []policy.Watch) {
	bySignal := make(map[signal.Signal]policy.Watch, len(watch))
	for _, wt := range watch {
		bySignal[wt.Signal] = wt
	}
	for sig, thr := range w.pollThreshold {
		if wt, ok := bySignal[sig]; ok {
			thr.Store(wt.Value)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	changed := false
	for sig, a := range w.memcg {
		wt, ok := bySignal[sig]
		if !ok {
			continue
		}
		m, err := w.layout.ReadMemory(a.rel)
		if err != nil {
			w.onErr()
			continue
		}
		v, ok := notify.UsageThreshold(uint64(wt.Capacity), uint64(max(0, wt.Value)), m.InactiveFile)
		if !ok || (absDiff(v, a.value) <= 1<<20 && now.Sub(a.armedAt) < rearmEvery) {
			continue
		}
		if err := a.n.SetThreshold(v); err != nil {
			if !a.failing {
				w.log.Warn("memcg threshold no longer armed: wake-ups rely on the other notifiers and the periodic sync",
					"signal", sig, "cgroup", a.n.Dir, "err", err)
				a.failing, changed = true, true
			}
			w.onErr()
			continue
		}
		if a.failing {
			w.log.Info("memcg threshold armed again", "signal", sig, "cgroup", a.n.Dir)
			a.failing, changed = false, true
		}
		a.value, a.armedAt = v, now
	}
	if changed {
		all := true
		for _, a := range w.memcg {
			all = all && !a.failing
		}
		w.setArmed(notifierMemcg, all)
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
