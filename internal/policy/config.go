package policy

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Name selects the policy.
type Name string

// Policies.
const (
	// Pressure acts at the kubelet's hard thresholds raised by a headroom, on fresh node-read stats,
	// and evicts to a target. The default.
	Pressure Name = "pressure"
	// Kubelet reproduces the kubelet's eviction: its thresholds, one pod per step.
	Kubelet Name = "kubelet"
	// ReclaimAware is Pressure on what the kernel cannot reclaim: a memory signal counts clean page cache
	// that is not refaulting as available unless PSI and the refault counters confirm the pressure, and
	// pods are ranked by their non-reclaimable usage above request.
	ReclaimAware Name = "reclaim-aware"
)

// Names lists the policies, for messages.
func Names() []Name { return []Name{Pressure, Kubelet, ReclaimAware} }

// Valid reports whether n is a policy.
func (n Name) Valid() bool { return n == Pressure || n == Kubelet || n == ReclaimAware }

// ReclaimConfig is how policy ReclaimAware confirms memory pressure.
type ReclaimConfig struct {
	// PSISomeAvg10 and PSIFullAvg10 are the memory PSI avg10 percentages (some, full) at or above which
	// a stall is confirmed; either one suffices.
	PSISomeAvg10, PSIFullAvg10 float64
	// RefaultRate is the rate of file activations (refaults of pages in the working set; refaults where
	// the kernel counts no activations) in bytes/s at or above which the stall is the working set
	// thrashing, not a stream of cold reads.
	RefaultRate int64
	// RefaultWindow is how far back "recently refaulted" reaches: the refault rate times it is taken off
	// the reclaimable estimate. The rates are measured over half a window to a window.
	RefaultWindow time.Duration
	// MinRateSpan is the shortest span a rate is measured over; before it the rate is unknown.
	MinRateSpan time.Duration
	// KubeletMargin: once a memory signal's working set is within this of the kubelet's own hard
	// threshold, the kubelet is about to evict whatever the estimate says, so the policy acts on the
	// working set too (with its own ranking) rather than leave the eviction to the kubelet.
	KubeletMargin int64
	// KubeletHorizon: without the reclaim rung (Action disabled, or the shell cannot reclaim), or once
	// the rung has had its chance (rung.go, withoutRung), the backstop acts only when the kubelet would
	// really act: the working set is already below the kubelet's threshold, or falls fast enough to
	// cross it within KubeletHorizon (its fall over the last MinRateSpan, not between two adjacent
	// samples: wstrend.go). A steady page-cache pod above the kubelet's threshold is left alone. 0: the
	// fixed KubeletMargin alone, as before.
	KubeletHorizon time.Duration
	// Action is the reclaim rung (rung.go): off by default.
	Action ReclaimAction
}

// ReclaimAction is the reclaim rung of policy ReclaimAware: when the gap between the kubelet's working
// set and the non-reclaimable estimate is what puts a memory signal under its threshold, the plan asks
// the shell to reclaim the file pages of the pods that hold them (memory.reclaim, force_empty) instead of
// evicting.
type ReclaimAction struct {
	// Enabled turns the rung on (the shell must also be able to write the cgroup files:
	// Input.ReclaimUnavailable).
	Enabled bool
	// MaxBytes bounds the bytes one step asks to reclaim, all targets together.
	MaxBytes int64
	// Settle is how long a planned reclaim has to bring the signal back before the policy evicts.
	Settle time.Duration
	// MinInterval is the shortest time between two reclaims of one signal (the rate bound): within it
	// the backstop evicts as without the rung.
	MinInterval time.Duration
}

// DefaultReclaimConfig: PSI some 10% or full 5% over 10 s, activations of 1Mi/s, a 10 s window, a
// 128Mi margin above the kubelet's threshold (half a second at 256 MiB/s).
func DefaultReclaimConfig() ReclaimConfig {
	return ReclaimConfig{PSISomeAvg10: 10, PSIFullAvg10: 5, RefaultRate: 1 << 20, RefaultWindow: 10 * time.Second,
		MinRateSpan: time.Second, KubeletMargin: 128 << 20, KubeletHorizon: DefaultKubeletHorizon,
		Action: ReclaimAction{MaxBytes: 2 << 30, Settle: 3 * time.Second, MinInterval: 10 * time.Second}}
}

// DefaultKubeletHorizon is how far ahead the backstop projects the working set's fall without the
// reclaim rung: the kubelet's housekeeping interval (10 s), within which it would see the crossing.
const DefaultKubeletHorizon = 10 * time.Second

// Headroom is how far above the kubelet's hard threshold of each signal the Pressure policy acts: an
// absolute amount or a fraction of the signal's capacity (threshold.Value). A signal without an entry
// gets no headroom.
type Headroom map[signal.Signal]threshold.Value

// DefaultHeadroom returns 256Mi for the memory signals and 5% of capacity for the disk, inode and PID
// signals (internal/config/agent's DefaultHeadroom is this, as the file writes it). At a ramp of
// 256 MiB/s, 256Mi is about a second: room for detection (a memcg or poll wake-up, milliseconds), the
// Eviction API round trip and the kubelet's SIGTERM before the kubelet's own threshold; disks fill in
// minutes, so a percentage that scales with the filesystem is used there.
func DefaultHeadroom() Headroom {
	h := Headroom{}
	for _, s := range signal.All() {
		if s.IsMemory() {
			h[s] = threshold.Value{Quantity: resource.NewQuantity(256<<20, resource.BinarySI)}
		} else {
			h[s] = threshold.Value{Percentage: 0.05}
		}
	}
	return h
}

// DefaultMinReclaimBytes is the minimum reclaim the Pressure policy adds to a byte threshold that has
// none of its own (evictionMinimumReclaim), so that a workload still ramping does not re-cross the
// threshold immediately after an eviction.
const DefaultMinReclaimBytes = 100 << 20

// Defaults of Config.
const (
	DefaultMaxEvictionsPerSync   = 3
	DefaultMaxEvictionsPerMinute = 10
	// DefaultKillLead is the trend kill's horizon when the agent may kill on the node: an OOM kill
	// expected within it is closer than an eviction can complete (1 s grace plus the kubelet's reaction).
	DefaultKillLead = 2 * time.Second
	// DefaultEvictionLead is how far ahead of a memory signal's exhaustion the Pressure and ReclaimAware
	// policies evict when the signal falls fast: the kubelet took 0.4 to 1.3 s on the test node from an
	// eviction request to the victim's death (1 s grace included), and a ramp that exhausts the signal
	// sooner ends in a kernel OOM kill (docs/benchmarks.md).
	DefaultEvictionLead = 2 * time.Second
	// DefaultInFlightTTL is how long a requested eviction (or kill) of a pod that is still listed and not
	// terminating counts as in flight (InFlightRule): the one rule for the agent's own requests and the
	// ledger's entries.
	DefaultInFlightTTL = 2 * time.Minute
	// DefaultTerminatingMargin is how long after the end of its grace period (metadata.deletionTimestamp)
	// a terminating pod's usage still counts as about to be released. The kubelet kills a pod within
	// max(10s, 1.5 × grace) of the deadline; 30 s covers that and a slow container runtime.
	DefaultTerminatingMargin = 30 * time.Second
	// DefaultPDBRetry is how long a pod whose eviction a PodDisruptionBudget refused is left alone before
	// it is asked again (the disruption controller needs a resync to allow another disruption).
	DefaultPDBRetry        = 10 * time.Second
	DefaultTaintHysteresis = 10 * time.Second
	DefaultAPIBackoffMin   = time.Second
	DefaultAPIBackoffMax   = 10 * time.Second
)

// Config is the policy's settings, already defaulted (internal/config/agent converts the agent's
// configuration file into it).
type Config struct {
	Policy Name
	// Headroom raises the kubelet's hard thresholds (Pressure and ReclaimAware).
	Headroom Headroom
	// MaxEvictionsPerSync caps the pods one step evicts (Pressure; Kubelet evicts one).
	MaxEvictionsPerSync int
	// MaxEvictionsPerMinute bounds the eviction requests in any sliding minute (both policies).
	MaxEvictionsPerMinute int
	// KillLead enables the trend kill: when the fall of a memory signal reaches zero available within
	// KillLead, the victims of a hard threshold are also SIGKILLed on the node. 0 disables it.
	KillLead time.Duration
	// EvictionLead: a hard memory threshold (Pressure and ReclaimAware) whose signal, falling over two
	// steps in a row with no memory eviction in flight, would reach zero within EvictionLead is acted on
	// at once, as if crossed: a fast ramp is evicted by its time to exhaustion, not only by its level.
	// 0 disables it.
	EvictionLead time.Duration
	// InFlightTTL is how long a requested eviction of a pod still listed without a deletion timestamp
	// counts as in flight: the lifetime of the in-flight rule (Config.InFlight), for the agent's own
	// requests and the ledger's entries alike.
	InFlightTTL time.Duration
	// TerminatingMargin: a terminating pod's usage is credited until its deletion timestamp plus this.
	TerminatingMargin time.Duration
	// PDBRetry is the pause after a PodDisruptionBudget refused a pod's eviction.
	PDBRetry time.Duration
	// TaintHysteresis is how long the pressure taint is still wanted after the pressure ended.
	TaintHysteresis time.Duration
	// APIBackoffMin and APIBackoffMax bound the backoff after the API was unreachable.
	APIBackoffMin, APIBackoffMax time.Duration
	// DryRun: plan as usual, but never plan a kill and never wait for the API backoff (nothing is sent).
	DryRun bool
	// Reclaim is how ReclaimAware confirms memory pressure.
	Reclaim ReclaimConfig
}

// DefaultConfig returns the defaults: policy Pressure, DefaultHeadroom, the trend kill off (it needs
// eviction.allowCgroupKill).
func DefaultConfig() Config {
	return Config{
		Policy: Pressure, Headroom: DefaultHeadroom(),
		MaxEvictionsPerSync: DefaultMaxEvictionsPerSync, MaxEvictionsPerMinute: DefaultMaxEvictionsPerMinute,
		EvictionLead: DefaultEvictionLead, InFlightTTL: DefaultInFlightTTL, TerminatingMargin: DefaultTerminatingMargin, PDBRetry: DefaultPDBRetry,
		TaintHysteresis: DefaultTaintHysteresis, APIBackoffMin: DefaultAPIBackoffMin, APIBackoffMax: DefaultAPIBackoffMax,
		Reclaim: DefaultReclaimConfig(),
	}
}

// Validate reports every problem at once, each naming the setting and the value.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) { errs = append(errs, fmt.Errorf("%s %v: %s", field, v, why)) }
	if !c.Policy.Valid() {
		bad("policy", fmt.Sprintf("%q", c.Policy), fmt.Sprintf("must be %q, %q or %q", Pressure, Kubelet, ReclaimAware))
	}
	if c.Policy == ReclaimAware {
		errs = append(errs, c.Reclaim.validate()...)
	}
	for _, sig := range signal.All() {
		v, ok := c.Headroom[sig]
		if ok && ((v.IsPercentage() && (v.Percentage < 0 || v.Percentage >= 1)) || (!v.IsPercentage() && v.Quantity.Sign() < 0)) {
			bad("headroom."+string(sig), v.String(), "must be >= 0 and below 100%")
		}
	}
	if c.MaxEvictionsPerSync < 1 {
		bad("maxEvictionsPerSync", c.MaxEvictionsPerSync, "must be at least 1")
	}
	if c.MaxEvictionsPerMinute < 1 {
		bad("maxEvictionsPerMinute", c.MaxEvictionsPerMinute, "must be at least 1")
	}
	if c.EvictionLead < 0 || c.EvictionLead > time.Minute {
		bad("evictionLead", c.EvictionLead, "must be between 0 (off) and 1m")
	}
	if c.KillLead < 0 || c.InFlightTTL <= 0 {
		bad("killLead/inFlightTTL", fmt.Sprintf("%s/%s", c.KillLead, c.InFlightTTL), "killLead must be >= 0 and inFlightTTL positive")
	}
	if c.TerminatingMargin < 0 || c.PDBRetry < 0 || c.TaintHysteresis < 0 {
		bad("terminatingMargin/pdbRetry/taintHysteresis", fmt.Sprintf("%s/%s/%s", c.TerminatingMargin, c.PDBRetry, c.TaintHysteresis),
			"must be >= 0")
	}
	if c.APIBackoffMin <= 0 || c.APIBackoffMax < c.APIBackoffMin {
		bad("apiBackoff", fmt.Sprintf("%s..%s", c.APIBackoffMin, c.APIBackoffMax), "min must be positive and max >= min")
	}
	return errors.Join(errs...)
}

func (r ReclaimConfig) validate() []error {
	var errs []error
	pct := func(field string, v float64) {
		if !(v > 0 && v <= 100) {
			errs = append(errs, fmt.Errorf("reclaim.%s %v: must be above 0 and at most 100 (percent)", field, v))
		}
	}
	pct("psiSomeAvg10", r.PSISomeAvg10)
	pct("psiFullAvg10", r.PSIFullAvg10)
	if r.RefaultRate < 0 || r.KubeletMargin < 0 {
		errs = append(errs, fmt.Errorf("reclaim.refaultRate/kubeletMargin %d/%d: must be >= 0", r.RefaultRate, r.KubeletMargin))
	}
	if r.KubeletHorizon < 0 || r.Action.MaxBytes < 0 || r.Action.Settle < 0 || r.Action.MinInterval < 0 {
		errs = append(errs, fmt.Errorf("reclaim.kubeletHorizon/action.maxBytes/action.settle/action.minInterval %s/%d/%s/%s: must be >= 0",
			r.KubeletHorizon, r.Action.MaxBytes, r.Action.Settle, r.Action.MinInterval))
	}
	if r.Action.Enabled && r.Action.MaxBytes == 0 {
		errs = append(errs, fmt.Errorf("reclaim.action.maxBytes 0: must be positive when the reclaim rung is enabled"))
	}
	if r.MinRateSpan <= 0 || r.RefaultWindow < 2*r.MinRateSpan {
		errs = append(errs, fmt.Errorf("reclaim.refaultWindow/minRateSpan %s/%s: minRateSpan must be positive and the window at least twice it",
			r.RefaultWindow, r.MinRateSpan))
	}
	return errs
}
