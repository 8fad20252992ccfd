package agent

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Settings are the loop's tunables, already defaulted and validated: the node, the periodic sync, and
// the policy's settings (policy.Config, embedded: Settings.Policy, Settings.DryRun, ...).
type Settings struct {
	// Node is the name of the node the agent runs on.
	Node string
	// SyncPeriod is the periodic full sync (default agentcfg.DefaultSyncPeriod).
	SyncPeriod time.Duration
	// PodStatsMaxAge is how old the pods' stats may be on a sync far from every threshold
	// (policy.State.PodStatsDue); 0 reads them on every sync, as the kubelet does.
	PodStatsMaxAge time.Duration
	policy.Config
}

// DefaultSettings returns DefaultConfig's settings for node with the trend kill's horizon set
// (policy.DefaultKillLead; DefaultConfig turns it off, as eviction.allowCgroupKill does).
func DefaultSettings(node string) Settings {
	s := DefaultConfig(node).Settings
	s.KillLead = policy.DefaultKillLead
	return s
}

// podLister lists the pods bound to the node (an informer's lister).
type podLister interface {
	List() ([]*corev1.Pod, error)
}

// evictLadder carries out one eviction (actuate.Ladder); EvictThen hands a PDB fallback wait and what
// follows it to the background, reporting the final result to later.
type evictLadder interface {
	EvictThen(ctx context.Context, req actuate.Request, later func(actuate.Result, error)) (actuate.Result, error)
}

// nodeEvents records the node events (actuate.Events).
type nodeEvents interface {
	PressureStarted(signal, observed, threshold string)
	PressureEnded(signal, observed string)
}

// loopBreaker makes the node's taint match the policy's wanted state, settles the ledger and expires
// avoidances.
type loopBreaker interface {
	Sync(ctx context.Context, now time.Time, want policy.Taint, pods []*corev1.Pod) error
	Tainted() bool
	// Avoiding counts the owners whose new pods avoid the node at now.
	Avoiding(now time.Time) int
}

// Agent is one node's eviction loop. Build it with its dependencies and call Run; Run must not be called
// twice. Every field except state is set before Run.
type Agent struct {
	Settings      Settings
	KubeletConfig threshold.Config
	Clock         clock.WithTicker
	Source        source.NodeReader
	Pods          podLister
	// PodsSynced reports whether Pods lists every pod of the node (the informer's cache has synced); nil
	// means always.
	PodsSynced func() bool
	// Unlisted, if set, lists the pods the node runs as found in its cgroup tree; used only until
	// PodsSynced, and only to kill (see unlisted.go).
	Unlisted func() ([]UnlistedPod, error)
	// Images, if set, reports the node's images (status.images): with the terminated pods' measured logs
	// it is the estimate of what the kubelet's node-level reclaim could free (policy Input.Reclaimable);
	// nil leaves it unknown.
	Images nodeImages
	// KubeletVersion, if set, reports the node's status.nodeInfo.kubeletVersion ("" while unknown): the
	// kubelet policy follows that release's eviction semantics; nil means the pinned 1.37.
	KubeletVersion func() string
	Ladder         evictLadder
	// Killer is the last rung used on the usage trend; nil disables it.
	Killer actuate.PodKiller
	// Reclaimer carries out the reclaim rung of policy reclaim-aware (reclaim.go); nil: unavailable.
	Reclaimer podReclaimer
	// Events records node events; nil records nothing.
	Events nodeEvents
	// Breaker is the loop breaker; nil disables it.
	Breaker loopBreaker
	// Ledger, if set, tells the policy which evictions a previous run of the agent carried out
	// (loopbreaker.PersistentLedger).
	Ledger  ledgerEntries
	Metrics *Metrics
	Log     *slog.Logger
	// Wake receives the notifiers' wake-ups.
	Wake <-chan struct{}
	// KubeletUpdates, if set, receives the kubelet's configuration when it changed; the next sync uses it.
	KubeletUpdates <-chan threshold.Config
	// Rearm, if set, is called after every sync with the thresholds the policy watches, so the notifiers
	// can follow them.
	Rearm func(watch []policy.Watch)
	// Deciding, if set, is told true when a sync starts and false once it has decided: the poll pauses
	// meanwhile, for the sync reads the files it reads.
	Deciding func(bool)
	// Synced reports each completed sync (tests, readiness); nil is fine.
	Synced func(syncResult)

	st loopState
	// later holds the final outcomes of ladders that went on in the background (actuate.Ladder.EvictThen)
	// until the next sync takes them; bg counts those ladders (SyncLoop waits for them when it ends).
	later laterOutcomes
	bg    sync.WaitGroup
	// fallbacks are the UIDs whose ladder goes on in the background: no new ladder starts for them.
	fallbacks sync.Map
}

// laterOutcomes are outcomes reported from outside the sync goroutine.
type laterOutcomes struct {
	mu   sync.Mutex
	outs []policy.Outcome
}

func (l *laterOutcomes) add(o policy.Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outs = append(l.outs, o)
}

// take returns the outcomes reported so far and forgets them.
func (l *laterOutcomes) take() []policy.Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.outs
	l.outs = nil
	return out
}

// ledgerEntries lists the ledger's evictions (loopbreaker.PersistentLedger).
type ledgerEntries interface {
	Entries() []policy.HistoryEntry
}

// loopState is what the loop remembers between syncs; only the sync goroutine touches it.
type loopState struct {
	policy policy.State
	// outcomes are what happened to the last plan's actions, fed into the next step.
	outcomes []policy.Outcome
	// reclaims are what the last plan's reclaims did, fed into the next step; reclaiming is true while
	// a reclaim runs (it may outlive the sync that started it: reclaim.go).
	reclaims   []policy.ReclaimOutcome
	reclaiming atomic.Bool
	started    bool
	// semanticsWarned is the kubelet version whose semantics warning was last logged.
	semanticsWarned string
	// unlisted are the UIDs of this sync's pods known only from the cgroup tree.
	unlisted map[string]bool
	// pods are the pods' stats as last read, at podsAt (zero: never); watch the last plan's thresholds.
	pods   map[string]signal.PodStats
	podsAt time.Time
	watch  []policy.Watch
	// times are this sync's phases on the agent's clock, for the evict line.
	times syncTimes
}

// syncTimes are when a sync started (its now), finished reading the node and decided: with the evict
// line's requested_at they split a crossing → request latency into reading, deciding and carrying out.
type syncTimes struct {
	started, read, decided time.Time
	// cpu is the process's CPU time (processCPU) when the sync started and when it decided; zero
	// when the kernel does not say.
	cpuStarted, cpuRead, cpuDecided cpuTime
	// gcs are the garbage collections completed by the process when the sync started and decided.
	gcsStarted, gcsDecided uint64
}

// cpuText is the process's CPU time from the sync's start to its decision, for the evict line ("" when
// unknown): "TOTAL (read R, decide D; user U, sys S; N GC)".
func (t syncTimes) cpuText() string {
	if t.cpuStarted.total() == 0 || t.cpuRead.total() == 0 || t.cpuDecided.total() == 0 {
		return ""
	}
	r := func(d time.Duration) string { return d.Round(time.Millisecond / 10).String() }
	all := t.cpuDecided.sub(t.cpuStarted)
	return fmt.Sprintf("%s (read %s, decide %s; user %s, sys %s; %d GC)", r(all.total()), r(t.cpuRead.sub(t.cpuStarted).total()),
		r(t.cpuDecided.sub(t.cpuRead).total()), r(all.user), r(all.sys), t.gcsDecided-t.gcsStarted)
}

func (a *Agent) init() {
	if a.st.started {
		return
	}
	a.st.started = true
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
}
