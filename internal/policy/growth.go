package policy

import (
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Growth that is not page cache. Once the reclaim rung has had its chance, the working set of a pod that
// reads its file in a loop falls as it reads the reclaimed pages back, and withoutRung holds that fall
// off down to halfway to the kubelet's threshold. A hog started beside the reader makes the working set
// fall too, but with anonymous memory: on the real node the hold let a 256Mi/s hog take the working set
// to 4Mi above the kubelet's threshold before the agent acted, and the walk then took the reader beside
// the hog. The two falls differ in what grows: a refill grows the active file pages and leaves the usage
// other than file pages (usage − file, the working set less the active file pages) where it was, a hog
// grows the latter. So the policy follows that usage, for each memory signal's scope and for each pod:
//   - a fall of the signal's non-file available amount (net of the pods in flight) that would take the
//     working set to the kubelet's threshold within KubeletHorizon is growth: the rung's holds give way and
//     the backstop evicts;
//   - a non-file fall that is all in pods whose eviction is under way is held: they free it when they die;
//   - the backstop's walk credits a growing pod with what it grows over the eviction lead (it frees what
//     it holds when its eviction completes), so it stops at the pod whose growth makes the fall;
//   - a reclaimed pod's samples shortly after its reclaim are not its growth (quietReclaimed).
//
// Rates are over the trend's span (at least MinRateSpan, wstrend.go); a span shorter than MinRateSpan, a
// pod seen for a moment, counts as MinRateSpan: a few pages read as a rate over 25 ms do not make growth.

// nonFileAvailable is v's available amount were no file page charged: the working set's plus the active
// file pages (the inactive ones are outside the working set already).
func nonFileAvailable(v ReclaimView) int64 {
	return v.WorkingSet + v.Estimate.File - v.Estimate.Inactive
}

// podNonFile is a pod's usage other than file pages (its working set less its active file pages, at least
// 0); false when its stats lack either.
func podNonFile(c rank.Candidate) (int64, bool) {
	s := c.Stats
	if s == nil || s.MemoryWorkingSet == nil || s.Memory == nil || s.Memory.ActiveFile == nil {
		return 0, false
	}
	return max(0, int64(*s.MemoryWorkingSet)-int64(*s.Memory.ActiveFile)), true
}

// podGrowth returns the pod's growth of usage other than file pages, bytes/s; 0 when it does not grow or
// is not known.
func (st *State) podGrowth(uid string, cfg ReclaimConfig) float64 {
	r, ok := st.podNF[uid].rise(cfg.MinRateSpan)
	if !ok || r <= 0 {
		return 0
	}
	return r
}

// growth is a memory signal's non-file growth at a step (bytes/s): of its scope (0 when not falling or
// not known), and the summed growth of the pods in flight and of the other pods (each pod's counted when
// it grows).
type growth struct {
	scope, inFlight, pods float64
}

// growthOf returns v's growth at now. A pod counts as in flight for it only for the eviction lead after
// its flight started (DefaultEvictionLead when the lead is off): the kubelet stops an evicted pod's
// containers 0.4 to 1.3 s after the request on the test node, and one still growing after that (a
// PodDisruptionBudget, an unreachable API) no longer explains the fall.
func (st *State) growthOf(now time.Time, v ReclaimView, cfg Config) growth {
	var g growth
	if r, ok := st.nfLast[v.Signal].rise(cfg.Reclaim.MinRateSpan); ok && r < 0 {
		g.scope = -r
	}
	uids := make([]string, 0, len(st.podNF))
	for uid := range st.podNF {
		uids = append(uids, uid)
	}
	sort.Strings(uids) // a float sum in a fixed order
	for _, uid := range uids {
		r := st.podGrowth(uid, cfg.Reclaim)
		if f, ok := st.flights[uid]; ok && f.explainsGrowth(now, cfg) {
			g.inFlight += r
		} else {
			g.pods += r
		}
	}
	return g
}

// explainsGrowth reports whether the flight counts as in flight for the growth rule at now: measured when
// it started, and within the eviction lead of its start (growthOf).
func (f flight) explainsGrowth(now time.Time, cfg Config) bool {
	lead := cfg.EvictionLead
	if lead <= 0 {
		lead = DefaultEvictionLead
	}
	return f.memKnown && now.Sub(f.since) <= lead
}

// wsFall is the raw working set's fall rate of sig from its last step to this one (bytes/s; 0 when it
// did not fall): what the kubelet sees coming now, where a growth rate over the rate span is diluted.
func (st *State) wsFall(sig signal.Signal) float64 {
	prev, cur := st.wsLast[sig].lastTwo()
	if !cur.Time.After(prev.Time) || prev.Available <= cur.Available {
		return 0
	}
	return float64(prev.Available-cur.Available) / cur.Time.Sub(prev.Time).Seconds()
}

// growths returns each view's growth at now: computed once per step, for the rung (rungStep) and the
// backstop's walk (growthCover) alike.
func (st *State) growths(now time.Time, views []ReclaimView, cfg Config) map[signal.Signal]growth {
	out := make(map[signal.Signal]growth, len(views))
	for _, v := range views {
		out[v.Signal] = st.growthOf(now, v, cfg)
	}
	return out
}

// explained reports growth at least half of which is in the pods in flight (the two rates are measured
// over different spans: a pod's over its own samples, the scope's over at least MinRateSpan).
func (g growth) explained() bool {
	return g.inFlight > 0 && g.inFlight >= g.scope/2
}

// crossing says why the growth, not explained by the pods in flight and at least half of it in the other
// pods (a fall of the scope's figure that no pod's usage shows is not growth: its working set and memory.stat
// are two reads), takes v's working set to the kubelet's threshold within horizon ("" when it does not):
// the backstop evicts.
func (g growth) crossing(v ReclaimView, horizon time.Duration) string {
	if g.scope <= 0 || g.explained() || g.pods < g.scope/2 || v.WorkingSet < v.Kubelet {
		return ""
	}
	// The faster of the two: the pods' figures are over their own, often shorter, spans, and the scope's
	// may be offset by memory freed outside the pods' usage (kernel memory freed with a reclaim: 3.6Mi/s
	// against a hog's 39Mi/s on the real node).
	eta := time.Duration(float64(v.WorkingSet-v.Kubelet) / max(g.scope, g.pods) * float64(time.Second))
	if eta > horizon {
		return ""
	}
	return fmt.Sprintf("the usage other than file pages grows %s/s (pods %s/s, pods in flight %s/s): the working set would "+
		"cross the kubelet's threshold %s in %s, within %s: growth, not page cache read back", threshold.FormatHuman(int64(g.scope), true),
		threshold.FormatHuman(int64(g.pods), true), threshold.FormatHuman(int64(g.inFlight), true), threshold.FormatAvailable(v.Kubelet, v.Signal), eta.Round(time.Millisecond), horizon)
}

// dying says why v's fall is left to the pods in flight ("" when it is not): the usage other than file
// pages grows, at least half of it in the pods whose eviction is under way.
func (g growth) dying() string {
	if g.scope <= 0 || !g.explained() {
		return ""
	}
	return fmt.Sprintf("the usage other than file pages grows %s/s, at least half of it in the pods in flight (%s/s): they free it "+
		"when their eviction completes", threshold.FormatHuman(int64(g.scope), true), threshold.FormatHuman(int64(g.inFlight), true))
}

// recordGrowth adds this step's non-file observations: v's scope (when its estimate is known) and each
// pod's.
func (st *State) recordGrowth(v ReclaimView, at time.Time, cfg ReclaimConfig) {
	if !v.Known {
		return
	}
	if st.nfLast == nil {
		st.nfLast = map[signal.Signal]wsTrend{}
	}
	st.nfLast[v.Signal] = st.nfLast[v.Signal].add(signal.Observation{Time: at, Available: nonFileAvailable(v)}, cfg.MinRateSpan)
}

// recordPodGrowth adds the pod's non-file usage at its sample's time (now when the sample has none or is
// newer): 0 for a pod without stats, which has no cgroup yet (release frees nothing of it either), and 0
// at the last step for a pod first seen now, so a pod that starts growing has a rate from its first
// sample with stats on.
func (st *State) recordPodGrowth(c rank.Candidate, now time.Time, cfg ReclaimConfig) {
	var u int64
	at := now
	if c.Stats != nil {
		var ok bool
		if u, ok = podNonFile(c); !ok {
			return
		}
		if t := c.Stats.Time; !t.IsZero() && !t.After(now) {
			at = t
		}
	}
	if st.podNF == nil {
		st.podNF = map[string]wsTrend{}
	}
	if until := st.quietUntil(c.UID); at.Before(until) {
		// Present and empty: the samples after the quiet window start a fresh trend, not a pod first seen.
		st.podNF[c.UID] = wsTrend{}
		return
	}
	delete(st.nfQuiet, c.UID) // a sample after the window: over for this pod
	t, seen := st.podNF[c.UID]
	if !seen && !st.podsAt.IsZero() && st.podsAt.Before(at) {
		// Not listed at the last step (or listed without its memory figures): it held nothing then. A hog
		// first seen 125 ms after its start had no rate at that step, and the halfway hold let it run on.
		t = t.add(signal.Observation{Time: st.podsAt}, cfg.MinRateSpan)
	}
	st.podNF[c.UID] = t.add(signal.Observation{Time: at, Available: u}, cfg.MinRateSpan)
}

// growthCover sets t.Growth, when v's usage other than file pages grows (g), the pods in flight do not
// explain it and the other pods do (crossing), to half of the growth not in flight, and returns each
// pod's growth by UID for the walk: the backstop's walk, whose goal only keeps the kubelet from acting,
// stops at the pods whose growth makes the fall (evicting them stops it) even when their usage so far
// does not cover the need. When the growing pods the walk may take (not critical, no PodDisruptionBudget
// refusal pending; growing: at least a quarter of t.Growth) grow t.Growth between them, t.GrowersOnly
// is set: the walk takes only them, in the ranking's order. On the real node a pod reading its file in a
// loop ranked before the hog beside it (its refaulted cache counted as not reclaimable) and was evicted
// for the hog's growth. nil when it does not apply.
func (st *State) growthCover(t *Target, v ReclaimView, g growth, pr decision.Prediction, cfg Config, p *Plan) map[string]float64 {
	if g.scope <= 0 || g.explained() || g.pods < g.scope/2 {
		return nil
	}
	t.GrowthRate = int64(max(g.scope, g.pods) - g.inFlight)
	t.Growth = int64((g.scope - g.inFlight) / 2)
	out := make(map[string]float64, len(pr.Order))
	var growers float64
	for i, pred := range pr.Order { // the ranking's order
		c := pr.Ranking.Entries[i].Candidate
		r := st.podGrowth(c.UID, cfg.Reclaim)
		if r <= 0 {
			continue
		}
		out[c.UID] = r
		if _, refused := st.refused[c.UID]; !pred.Critical && !refused && r >= float64(t.Growth)/4 {
			growers += r
		}
	}
	t.GrowersOnly = growers >= float64(t.Growth)
	only := ""
	if t.GrowersOnly {
		only = "; the growing pods grow that fast between them: the walk takes only them"
	}
	p.tr().add(KindTarget, string(v.Signal), fmt.Sprintf("the usage other than file pages grows %s/s (%s/s of it in pods in flight): "+
		"the walk also stops once the pods taken grow %s/s, half the rest%s", threshold.FormatHuman(int64(g.scope), true),
		threshold.FormatHuman(int64(g.inFlight), true), threshold.FormatHuman(t.Growth, true), only))
	return out
}

// quietReclaimed starts the quiet window of each reclaimed cgroup: until span after the reclaim ended, a
// pod's samples are not its growth, and its trend starts again after it. The pod's usage other than file
// pages is its working set (memory.usage_in_bytes on v1, memory.current on v2) less the active file pages
// of memory.stat, two reads; while a reclaim frees the pod's cache and the pod reads it back (a looping
// reader on the real node refilled 300MB at about 1GB/s), the two reads disagree by tens of MiB, either
// way (sampled every 25 ms there: from −20Mi to +171Mi around each reclaim, within half a second of its
// start, 2 to 4Mi otherwise). A trend over such a sample read as 15Mi/s of growth, and the backstop
// evicted the reader 7m41s into its ten-minute loop (docs/benchmarks.md). A reclaim of the pods cgroup
// (UID "") quiets every pod.
func (st *State) quietReclaimed(outs []ReclaimOutcome, span time.Duration) {
	for _, o := range outs {
		until := o.At.Add(span)
		if o.UID == "" {
			if until.After(st.nfQuietAll) {
				st.nfQuietAll = until
			}
			continue
		}
		if st.nfQuiet == nil {
			st.nfQuiet = map[string]time.Time{}
		}
		if until.After(st.nfQuiet[o.UID]) {
			st.nfQuiet[o.UID] = until
		}
	}
}

// quietUntil is the end of the pod's quiet window (zero: none).
func (st *State) quietUntil(uid string) time.Time {
	until := st.nfQuietAll
	if t := st.nfQuiet[uid]; t.After(until) {
		until = t
	}
	return until
}
