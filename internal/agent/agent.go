package agent

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Settings are the loop's tunables, already defaulted and validated.
type Settings struct {
	// Node is the name of the node the agent runs on.
	Node   string
	Policy Policy
	// Headroom raises the kubelet's hard thresholds (pressure policy only).
	Headroom Headroom
	// SyncPeriod is the periodic full sync (default 10s).
	SyncPeriod time.Duration
	// MaxEvictionsPerSync caps the pods one sync evicts (pressure policy; the kubelet policy evicts one).
	MaxEvictionsPerSync int
	// MaxEvictionsPerMinute bounds the eviction requests in any sliding minute.
	MaxEvictionsPerMinute int
	// KillLead enables the last rung: when the usage trend of a memory signal reaches zero available
	// within KillLead, the chosen pod's processes are SIGKILLed right after the eviction request. 0
	// disables it.
	KillLead time.Duration
	// InFlightTTL is how long a requested eviction counts as in flight when the pod is still listed
	// without a deletion timestamp.
	InFlightTTL time.Duration
	// APIBackoffMin and APIBackoffMax bound the backoff after the API was unreachable.
	APIBackoffMin, APIBackoffMax time.Duration
	DryRun                       bool
}

// DefaultSettings returns the defaults for node.
func DefaultSettings(node string) Settings {
	return Settings{
		Node: node, Policy: PolicyPressure, Headroom: DefaultHeadroom(), SyncPeriod: 10 * time.Second,
		MaxEvictionsPerSync: 3, MaxEvictionsPerMinute: 10, KillLead: DefaultKillLead,
		InFlightTTL: 2 * time.Minute, APIBackoffMin: time.Second, APIBackoffMax: 10 * time.Second,
	}
}

// nodeReader reads the node (source.Node).
type nodeReader interface {
	Snapshot(now time.Time) (signal.Snapshot, error)
}

// podLister lists the pods bound to the node (an informer's lister).
type podLister interface {
	List() ([]*corev1.Pod, error)
}

// evictLadder carries out one eviction (actuate.Ladder).
type evictLadder interface {
	Evict(ctx context.Context, req actuate.Request) (actuate.Result, error)
}

// nodeEvents records the node events (actuate.Events).
type nodeEvents interface {
	PressureStarted(signal, observed, threshold string)
	PressureEnded(signal, observed string)
}

// loopBreaker keeps the node tainted while under pressure (and a short hysteresis after it), settles the
// ledger and expires avoidances.
type loopBreaker interface {
	Sync(ctx context.Context, now time.Time, underPressure bool, sig string, pods []*corev1.Pod) error
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
	Source        nodeReader
	Pods          podLister
	Ladder        evictLadder
	// Killer is the last rung used on the usage trend; nil disables it.
	Killer actuate.PodKiller
	// Events records node events; nil records nothing.
	Events nodeEvents
	// Breaker is the loop breaker; nil disables it.
	Breaker loopBreaker
	Metrics *Metrics
	Log     *slog.Logger
	// Wake receives the notifiers' wake-ups.
	Wake <-chan struct{}
	// Rearm, if set, is called after every sync with the thresholds acted on and the raw snapshot, so
	// the notifiers can follow the thresholds.
	Rearm func(cfg threshold.Config, snap signal.Snapshot)
	// Synced reports each completed sync (tests, readiness); nil is fine.
	Synced func(syncResult)

	st loopState
}

// loopState is what the loop remembers between syncs; only the sync goroutine touches it.
type loopState struct {
	decision  decision.State
	started   bool
	fsLayout  bool // the containerfs thresholds were derived from the observed layout
	lastObs   map[signal.Signal]signal.Observation
	rawMet    map[signal.Signal]bool
	crossing  map[signal.Signal]time.Time // episode start (estimated crossing) not yet reported
	requested map[string]time.Time        // pod UID -> when we requested its eviction (or would have)
	refused   map[string]refusal          // pod UID -> the last PodDisruptionBudget refusal of its eviction
	pressure  *episode
	limiter   *window
	api       backoff
}

// refusal is a PodDisruptionBudget refusal: when, and whether the request was for a hard threshold.
type refusal struct {
	at   time.Time
	hard bool
}

// episode is a pressure episode as the node events report it.
type episode struct {
	Signal, Threshold string
}

func (a *Agent) init() {
	s := &a.st
	if s.started {
		return
	}
	s.started = true
	s.lastObs = map[signal.Signal]signal.Observation{}
	s.rawMet = map[signal.Signal]bool{}
	s.crossing = map[signal.Signal]time.Time{}
	s.requested = map[string]time.Time{}
	s.refused = map[string]refusal{}
	s.limiter = &window{Max: a.Settings.MaxEvictionsPerMinute, Span: time.Minute}
	s.api = backoff{Min: a.Settings.APIBackoffMin, Max: a.Settings.APIBackoffMax}
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
}
