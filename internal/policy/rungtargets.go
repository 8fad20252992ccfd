package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kube-pressure/pressure/internal/threshold"
)

// The reclaim rung's targets: whom to ask for how much (rung.go decides when).

// reclaimTargets picks the reclaim of one view: the pods with a known estimate and reclaimable file
// pages, not thrashing (activation rate at or above ReclaimConfig.RefaultRate while the view's PSI is
// not low: refaults that stall nobody are a pod reading its file again, as a page-cache pod does during
// its own fill, seen on the real node where such a pod was evicted for it), largest reclaimable
// first (then namespace, name, UID); each asked for its inactive file pages plus what the working set
// still needs of its gain (reclaimable − inactive: the kernel drains the inactive list first, and the
// working set leaves it out already), within ReclaimAction.MaxBytes in all. Without any pod estimate, the
// pods cgroup is the target; so it is when the known pods fall short while some pods' estimates are not
// known and no pod thrashes (a new pod's refault rate is not measured yet: seen on the real node, where
// the agent evicted the page-cache pod the rung was for). enough reports that the requests cover
// goal − WorkingSet; skipped are the
// thrashing pods passed over, in words.
func reclaimTargets(v ReclaimView, goal int64, ests []podReclaim, cfg Config) ([]ReclaimRequest, bool, []string) {
	need, budget := goal-v.WorkingSet, cfg.Reclaim.Action.MaxBytes
	var cands []podReclaim
	var skipped []string
	anyKnown, anyUnknown := false, false
	for _, e := range ests {
		if !e.known {
			anyUnknown = true
			continue
		}
		anyKnown = true
		if e.rateKnown && e.rate >= float64(cfg.Reclaim.RefaultRate) && !psiLow(v, cfg.Reclaim) {
			skipped = append(skipped, fmt.Sprintf("%s: thrashing (activations %s/s, PSI not low): not reclaimed", e.ref,
				threshold.FormatQuantity(int64(e.rate), true)))
			continue
		}
		if e.est.Reclaimable > 0 {
			cands = append(cands, e)
		}
	}
	if !anyKnown {
		return podsCgroupTarget(v, need, budget, "no pod's estimate is known: the pods cgroup", skipped)
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.est.Reclaimable != b.est.Reclaimable {
			return a.est.Reclaimable > b.est.Reclaimable
		}
		if a.ref.Namespace != b.ref.Namespace {
			return a.ref.Namespace < b.ref.Namespace
		}
		if a.ref.Name != b.ref.Name {
			return a.ref.Name < b.ref.Name
		}
		return a.ref.UID < b.ref.UID
	})
	var out []ReclaimRequest
	for _, c := range cands {
		if need <= 0 || budget <= 0 {
			break
		}
		take := min(max(0, c.est.Gain()), need)
		bytes := min(c.est.Reclaimable, c.est.Inactive+take, budget)
		if take <= 0 || bytes <= 0 {
			continue
		}
		out = append(out, ReclaimRequest{Signal: v.Signal, Pod: c.ref, Bytes: bytes, Reclaimable: c.est.Reclaimable,
			Why: fmt.Sprintf("%s of %s reclaimable file pages (inactive %s first)", threshold.FormatQuantity(bytes, true),
				threshold.FormatQuantity(c.est.Reclaimable, true), threshold.FormatQuantity(c.est.Inactive, true))})
		budget -= bytes
		need -= max(0, bytes-c.est.Inactive)
	}
	if need > 0 && anyUnknown && len(skipped) == 0 {
		// The known pods fall short and some pods' estimates are not known (a new pod's refault rate is not
		// measured yet while PSI is not low): the pods cgroup's own estimate covers them all, and with no
		// pod thrashing the kernel may take the pages from any of them.
		return podsCgroupTarget(v, goal-v.WorkingSet, cfg.Reclaim.Action.MaxBytes,
			"the known pods' file pages fall short and some pods' estimates are not known: the pods cgroup", skipped)
	}
	return out, need <= 0 && len(out) > 0, skipped
}

// podsCgroupTarget is the reclaim of the pods cgroup: its inactive file pages plus need, within budget,
// enough when the scope's estimate covers need.
func podsCgroupTarget(v ReclaimView, need, budget int64, why string, skipped []string) ([]ReclaimRequest, bool, []string) {
	gain := v.Estimate.Gain()
	bytes := min(budget, v.Estimate.Reclaimable, v.Estimate.Inactive+need)
	if gain < need || bytes <= 0 {
		return nil, false, skipped
	}
	return []ReclaimRequest{{Signal: v.Signal, Bytes: bytes, Reclaimable: v.Estimate.Reclaimable, Why: why}},
		bytes-v.Estimate.Inactive >= need, skipped
}

// mergeReclaim adds q to reqs; a target already asked (the other memory signal) keeps the larger size.
func mergeReclaim(reqs []ReclaimRequest, q ReclaimRequest) []ReclaimRequest {
	for i := range reqs {
		if reqs[i].Pod.UID == q.Pod.UID {
			reqs[i].Bytes = max(reqs[i].Bytes, q.Bytes)
			return reqs
		}
	}
	return append(reqs, q)
}

// describeReclaims is "1.5Gi of file pages from default/reader, 100Mi from ...".
func describeReclaims(reqs []ReclaimRequest) string {
	parts := make([]string, len(reqs))
	for i, q := range reqs {
		parts[i] = threshold.FormatQuantity(q.Bytes, true) + " of file pages from " + q.Target()
	}
	return strings.Join(parts, ", ")
}
