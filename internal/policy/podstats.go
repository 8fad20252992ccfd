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
)

// PodStatsNearFactor sets "near a threshold": a signal whose available is below this many times its
// watched threshold has its pods read on every sync.
const PodStatsNearFactor = 2

// PodStatsDue says whether a sync must read every pod's stats (their cgroups, volumes and logs) afresh,
// and why, or "" when the stats read at lastRead may serve. It looks at the node's own signals, read
// first and cheaply: obs and psi are this sync's, watch the thresholds of the last plan.
//
// Pod stats decide nothing until a signal crosses its threshold; they rank the victims and credit the
// evictions under way. So the step reads them whenever a decision could use them: on every sync while a
// signal is under pressure or within PodStatsNearFactor of its threshold, while an eviction is under
// way, a PDB refusal waits or memory stalls (PSI: reclaim-aware's thrash evidence is per-pod refaults);
// otherwise at least every maxAge, which keeps the metrics and refault windows alive. A threshold
// crossed between two syncs is seen by the sync's own node read, before this is asked.
func (st State) PodStatsDue(now time.Time, obs map[signal.Signal]signal.Observation, psi []signal.Pressure,
	watch []Watch, lastRead time.Time, maxAge time.Duration) string {
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
	for _, p := range psi {
		if p.Resource == "memory" && p.Some.Avg10 > 0 {
			return PodStatsStall
		}
	}
	for _, w := range watch {
		o, ok := obs[w.Signal]
		if !ok {
			continue
		}
		if w.Value > 0 && o.Available < PodStatsNearFactor*w.Value {
			return PodStatsNear
		}
	}
	return ""
}
