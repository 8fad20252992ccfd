package policy

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Two waits of policy ReclaimAware on evidence that is not its to act on yet: a pod's refault rate not
// measured (waitForPodRates) and the rung's own reclaim read back (readingBack).

// firstUnmeasured returns the first pod (by namespace/name, then UID) whose refault rate is not measured
// yet although it holds file pages, or nil.
func firstUnmeasured(ests []podReclaim) *PodRef {
	var out *PodRef
	for i := range ests {
		r := ests[i].ref
		if ests[i].unmeasured && (out == nil || r.String() < out.String() || (r.String() == out.String() && r.UID < out.UID)) {
			out = &ests[i].ref
		}
	}
	return out
}

// waitForPodRates takes the scope's refaults as 0 in a view not confirmed while the scope refaults at
// ReclaimConfig.RefaultRate or more and a pod's refault rate is not measured yet (unmeasured): the
// estimate would take the scope's refaults off its reclaimable cache, but the ranking would take that
// pod's cache as reclaimable and its usage as small. A thrasher whose stats were first read when its
// refaults began was ranked below the quiet pod beside it, which was evicted (the real node). The wait is
// one rate span (ReclaimConfig.MinRateSpan) of the pod's samples, and it defers only what the refaults
// decide: an anonymous hog still lowers the estimate, and the backstop still acts on the working set.
func waitForPodRates(v ReclaimView, o signal.Observation, unmeasured *PodRef, cfg ReclaimConfig) ReclaimView {
	if unmeasured == nil || !v.Known || v.Confirmed || !v.RefaultKnown || v.RefaultRate < float64(cfg.RefaultRate) ||
		v.Estimate.Refaulted == 0 {
		return v
	}
	e := v.Estimate
	e.Refaulted = 0
	e.Reclaimable = max(0, e.File-e.Dirty-e.Writeback)
	v.Estimate = e
	v.NonReclaimable = nonReclaimableAvailable(o, e)
	v.Effective = v.NonReclaimable
	return v.addWhy(fmt.Sprintf("the %s scope refaults %s/s, but the refault rate of %s, which holds file pages, is not measured yet: "+
		"refaulted taken as 0 until it is, since the ranking could not say which pod refaults", scopeName(v.Signal),
		threshold.FormatQuantity(int64(v.RefaultRate), true), unmeasured))
}

// readingBack makes a view that PSI and the refaults confirm not confirmed while its signal's last reclaim
// of the rung was planned less than ReclaimAction.Settle + RefaultWindow ago: the reclaimed pages are read
// back (a pod that reads its file in a loop does so at once), and those refaults and their stalls are the
// reclaim's doing, within the refault window and PSI's avg10. Confirmed, the policy would act on the
// working set the reclaim is holding up and evict the reader (make test's looping-reader case on the real
// node, once: node PSI full 5.97% during the hold). Real pressure still acts meanwhile: refaulted cache is
// not reclaimable in the estimate, an anonymous hog lowers it, and the backstop acts below the kubelet's
// threshold.
func (st *State) readingBack(now time.Time, v ReclaimView, cfg ReclaimConfig) ReclaimView {
	last, ok := st.lastReclaim[v.Signal]
	if !v.Confirmed || !ok || !now.Before(last.Add(cfg.Action.Settle+cfg.RefaultWindow)) {
		return v
	}
	v.Confirmed, v.Effective = false, v.NonReclaimable
	return v.addWhy(fmt.Sprintf("stalls and refaults within %s of the reclaim at %s are its pages read back: not confirmed",
		cfg.Action.Settle+cfg.RefaultWindow, stamp(last)))
}

// addWhy returns v with why added to its reasons ("; " after those it has).
func (v ReclaimView) addWhy(why string) ReclaimView {
	if v.Why != "" {
		why = v.Why + "; " + why
	}
	v.Why = why
	return v
}
