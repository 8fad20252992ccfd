package policy

import (
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// Why a step needs every pod's stats read afresh (PodStatsDue).
const (
	PodStatsEverySync = "every sync"             // maxAge 0: read on every sync, as the kubelet does
	PodStatsFirst     = "first read"             // none read yet
	PodStatsStale     = "older than the max age" // the last read is maxAge old
	PodStatsBusy      = "pressure or eviction under way"
	PodStatsStall     = "memory stall" // PSI memory some avg10 above zero
	PodStatsNear      = "near a threshold"
	// PodStatsRefaults: policy ReclaimAware, the pods cgroup refaults file pages at or above
	// ReclaimConfig.RefaultRate (thrash: the per-pod refault rates rank the victims).
	PodStatsRefaults = "pods refault file pages"
	// PodStatsNearEstimate: policy ReclaimAware, a memory signal is near a threshold by the
	// non-reclaimable estimate (what the policy acts on) although its working set is not.
	PodStatsNearEstimate = "near a threshold by the reclaim estimate"
)

// PodStatsNearFactor sets "near a threshold": a signal whose available is below this many times its
// watched threshold has its pods read on every sync.
const PodStatsNearFactor = 2

// PodStatsDue says whether a sync must read every pod's stats (their cgroups, volumes and logs) afresh,
// and why, or "" when the stats read at lastRead may serve. It looks at the node's own reads, taken
// first and cheaply: snap is this sync's (signals, PSI, the node's and the pods cgroup's memory.stat;
// no pods), watch the thresholds of the last plan, cfg the policy's configuration.
//
// Pod stats decide nothing until a signal crosses its threshold; they rank the victims and credit the
// evictions under way. So the step reads them whenever a decision could use them: on every sync while a
// signal is under pressure or within PodStatsNearFactor of its threshold, while an eviction is under
// way, a PDB refusal waits or memory stalls (PSI: reclaim-aware's thrash evidence is per-pod refaults);
// with policy ReclaimAware also while the pods cgroup refaults file pages or a memory signal is near a
// threshold by the reclaim estimate (it acts on the estimate: a thrasher whose refaults are not
// activated stalls nothing and leaves its working set low, and with stats a minute old the quiet pod
// beside it was ranked first on the real node); otherwise at least every maxAge, which keeps the
// metrics and refault windows alive. A threshold crossed between two syncs is seen by the sync's own
// node read, before this is asked.
func (st State) PodStatsDue(now time.Time, snap signal.Snapshot, cfg Config, watch []Watch, lastRead time.Time,
	maxAge time.Duration) string {
	switch {
	case maxAge <= 0:
		return PodStatsEverySync
	case lastRead.IsZero():
		return PodStatsFirst
	case now.Sub(lastRead) >= maxAge:
		return PodStatsStale
	case len(st.pressure) > 0 || len(st.flights) > 0 || len(st.refused) > 0 || st.episode != nil:
		return PodStatsBusy
	}
	for _, p := range snap.PSI {
		if p.Resource == "memory" && p.Some.Avg10 > 0 {
			return PodStatsStall
		}
	}
	if near(snap.Observations, watch) {
		return PodStatsNear
	}
	if cfg.Policy != ReclaimAware {
		return ""
	}
	if r := st.peekRates(now, scopePods, snap.PodsMemory, cfg.Reclaim); r.refaultKnown && r.refault >= float64(cfg.Reclaim.RefaultRate) {
		return PodStatsRefaults
	}
	if near(st.estimated(now, snap, cfg.Reclaim), watch) {
		return PodStatsNearEstimate
	}
	return ""
}

// near reports a watched signal whose available is below PodStatsNearFactor times its threshold.
func near(obs map[signal.Signal]signal.Observation, watch []Watch) bool {
	for _, w := range watch {
		if o, ok := obs[w.Signal]; ok && w.Value > 0 && o.Available < PodStatsNearFactor*w.Value {
			return true
		}
	}
	return false
}

// peekRates returns the scope's rates were stat sampled at now, without recording the sample (the zero
// rates when stat is nil).
func (st State) peekRates(now time.Time, scope string, stat *signal.MemoryStat, cfg ReclaimConfig) rates {
	if stat == nil {
		return rates{}
	}
	_, r := st.windows[scope].observe(sampleOf(stat, now), cfg.RefaultWindow, cfg.MinRateSpan)
	return r
}

// estimated returns the memory signals' observations with their available amount on the non-reclaimable
// estimate (refaults counted when their rate is known), as policy ReclaimAware would see them before
// PSI or the backstop; signals without a memory.stat are left out.
func (st State) estimated(now time.Time, snap signal.Snapshot, cfg ReclaimConfig) map[signal.Signal]signal.Observation {
	out := map[signal.Signal]signal.Observation{}
	for _, sig := range []signal.Signal{signal.MemoryAvailable, signal.AllocatableMemoryAvailable} {
		o, ok := snap.Observations[sig]
		scope, stat := scopeOf(sig, snap)
		if !ok || stat == nil {
			continue
		}
		r := st.peekRates(now, scope, stat, cfg)
		if est, ok := EstimateReclaim(stat, r.refault, cfg.RefaultWindow); ok {
			o.Available = nonReclaimableAvailable(o, est)
			out[sig] = o
		}
	}
	return out
}
