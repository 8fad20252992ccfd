package policy

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Scopes of the reclaim estimate's rate windows (pods are keyed by UID).
const (
	scopeNode = "node"
	scopePods = "pods"
)

// ReclaimView is how policy ReclaimAware sees one memory signal at one step.
type ReclaimView struct {
	Signal signal.Signal
	// Known is false when the scope's memory.stat or refault rate is not known: the signal is then acted
	// on as the kubelet measures it (the working set), as policy Pressure does. Why says what is missing.
	Known bool
	Why   string
	// Estimate is the scope's reclaim estimate (Known only).
	Estimate Reclaim
	// WorkingSet is the available amount the kubelet's formula gives; NonReclaimable the available amount
	// on the non-reclaimable estimate (capacity − (usage − reclaimable)); Effective what the policy acts on.
	WorkingSet, NonReclaimable, Effective int64
	// PSIScope names the PSI record read ("node" or the pods cgroup); SomeAvg10 and FullAvg10 its memory
	// avg10 (percent); PSIKnown is false without one.
	PSIScope             string
	SomeAvg10, FullAvg10 float64
	PSIKnown             bool
	// RefaultRate and ActivateRate are the scope's file refaults and activations, bytes/s (Known flags).
	RefaultRate, ActivateRate   float64
	RefaultKnown, ActivateKnown bool
	// Confirmed: the kernel's stall signals confirm the pressure (PSI at or above the thresholds, and
	// refaults at or above the rate when the counters are known). Backstop: the working set is within
	// ReclaimConfig.KubeletMargin of the kubelet's own hard threshold (Kubelet, resolved; KubeletKnown),
	// so the kubelet is about to evict. Either way the policy acts on the lower of WorkingSet and
	// NonReclaimable; else on NonReclaimable alone.
	Confirmed, Backstop bool
	Kubelet             int64
	KubeletKnown        bool
	// Steady says why the backstop did not act although the working set is within KubeletMargin of the
	// kubelet's threshold ("" when it acted or was not near): without the reclaim rung, the working set
	// is not projected to cross the kubelet's threshold within ReclaimConfig.KubeletHorizon.
	Steady string
	// Held says that the reclaim rung holds the eviction off at this step (a reclaim planned or
	// settling): Effective is the non-reclaimable estimate although Backstop is set.
	Held bool
}

// podReclaim is one pod's reclaim estimate at a step (known false when it has none) and its activation
// (or refault) rate, bytes/s: what the reclaim rung picks its targets by.
type podReclaim struct {
	ref       PodRef
	est       Reclaim
	known     bool
	rate      float64
	rateKnown bool
	// unmeasured: the pod holds file pages and its memory.stat counts refaults, but its refault rate is
	// not measured yet (its first sample, or samples less than ReclaimConfig.MinRateSpan apart).
	unmeasured bool
}

// reclaimView returns the snapshot policy ReclaimAware acts on (each memory signal's Available replaced
// by ReclaimView.Effective) and the pods with their working set replaced by their non-reclaimable usage
// (what they are ranked by), and records the views in the plan.
//
// kubelet holds the kubelet's resolved hard threshold of each memory signal (the highest).
//
// rungOn says the reclaim rung is on: the backstop then keeps the fixed margin (the rung reclaims rather
// than evicts); without it the backstop needs the working set's trend (ReclaimConfig.KubeletHorizon).
func (st *State) reclaimView(now time.Time, snap signal.Snapshot, pods []Pod, kubelet map[signal.Signal]int64, cfg ReclaimConfig,
	rungOn bool, p *Plan) (signal.Snapshot, []Pod, []podReclaim) {
	out := snap
	out.Observations = make(map[signal.Signal]signal.Observation, len(snap.Observations))
	for sig, o := range snap.Observations {
		out.Observations[sig] = o
	}
	if who := st.gone(pods); who != "" {
		delete(st.windows, scopeNode)
		delete(st.windows, scopePods)
		st.restarted = now
		p.tr().add(KindReclaim, who, "in flight and gone (or without stats): its memory counts as freed, so the node and pods "+
			"refault rates, measured while it ran, restart")
	}
	live := map[string]bool{scopeNode: true, scopePods: true}
	var node ReclaimView
	node.PSIScope, node.SomeAvg10, node.FullAvg10, node.PSIKnown = memoryPSI(snap.PSI, false)
	low := psiLow(node, cfg)
	podsOut := make([]Pod, len(pods))
	ests := make([]podReclaim, len(pods))
	for i, pod := range pods {
		live[pod.Candidate.UID] = true
		podsOut[i] = pod
		st.recordPodGrowth(pod.Candidate, now, cfg)
		podsOut[i].Candidate, ests[i] = st.nonReclaimablePod(now, pod.Candidate, low, cfg)
	}
	unmeasured := firstUnmeasured(ests)
	for _, sig := range []signal.Signal{signal.AllocatableMemoryAvailable, signal.MemoryAvailable} {
		o, ok := snap.Observations[sig]
		if !ok {
			continue
		}
		v := st.readingBack(now, waitForPodRates(st.view(now, sig, o, snap, cfg), o, unmeasured, cfg), cfg)
		v.Kubelet, v.KubeletKnown = kubelet[sig]
		st.recordGrowth(v, o.Time, cfg)
		v.Backstop = v.Known && v.KubeletKnown && v.WorkingSet < v.Kubelet+cfg.KubeletMargin
		if st.wsLast == nil {
			st.wsLast = map[signal.Signal]wsTrend{}
		}
		st.wsLast[sig] = st.wsLast[sig].add(o, cfg.MinRateSpan)
		if v.Backstop && !rungOn && cfg.KubeletHorizon > 0 {
			v.Steady = st.wsLast[sig].steady(o, v.Kubelet, cfg.KubeletHorizon)
			v.Backstop = v.Steady == ""
		}
		if v.Backstop {
			v.Effective = min(v.WorkingSet, v.NonReclaimable)
		}
		o.Available = v.Effective
		out.Observations[sig] = o
		p.Reclaim = append(p.Reclaim, v)
		p.tr().add(KindReclaim, string(sig), describeView(v, cfg))
	}
	for k := range st.windows {
		if !live[k] {
			delete(st.windows, k)
		}
	}
	for k := range st.podNF {
		if !live[k] {
			delete(st.podNF, k)
		}
	}
	for k := range st.nfQuiet {
		if !live[k] {
			delete(st.nfQuiet, k)
		}
	}
	st.podsAt = now
	return out, podsOut, ests
}

// gone returns the first pod (by UID) in flight that has left the listing or has no memory stats any more:
// the in-flight credit no longer holds its usage, which is then taken as freed. Its page cache may still be
// charged to the pods cgroup (cgroup v1 keeps it there until it is reclaimed), and the scopes' refault
// rates still count the refaults it caused while it ran: the estimate would call its now cold cache
// "recently refaulted" for a whole window and evict the next pod for it. "" when there is none.
func (st *State) gone(pods []Pod) string {
	listed := make(map[string]rank.Candidate, len(pods))
	for _, p := range pods {
		listed[p.Candidate.UID] = p.Candidate
	}
	var out string
	for uid := range st.flights {
		c, ok := listed[uid]
		if (!ok || c.Stats == nil || c.Stats.Memory == nil || c.Stats.MemoryWorkingSet == nil) && (out == "" || uid < out) {
			out = uid
		}
	}
	return out
}

// view assesses one memory signal: its scope's estimate, PSI and refault rates.
func (st *State) view(now time.Time, sig signal.Signal, o signal.Observation, snap signal.Snapshot, cfg ReclaimConfig) ReclaimView {
	v := ReclaimView{Signal: sig, WorkingSet: o.Available, NonReclaimable: o.Available, Effective: o.Available}
	scope, stat := scopeOf(sig, snap)
	v.PSIScope, v.SomeAvg10, v.FullAvg10, v.PSIKnown = memoryPSI(snap.PSI, sig == signal.AllocatableMemoryAvailable)
	if stat == nil {
		v.Why = "no memory.stat of the " + scope + " scope"
		return v
	}
	r := st.rates(now, scope, stat, cfg)
	v.RefaultRate, v.RefaultKnown, v.ActivateRate, v.ActivateKnown = r.refault, r.refaultKnown, r.activate, r.activateKnown
	restarting := st.restarting(now, r, stat, cfg)
	if !r.refaultKnown && !psiLow(v, cfg) && !restarting {
		v.Why = "the " + scope + " refault rate is not measured yet and PSI is not below the thresholds"
		return v
	}
	est, ok := EstimateReclaim(stat, r.refault, cfg.RefaultWindow)
	if !ok {
		v.Why = "the " + scope + " memory.stat lacks active_file, inactive_file, dirty or writeback"
		return v
	}
	v.Known, v.Estimate = true, est
	switch {
	case restarting:
		v.Why = "refault rate restarting since a pod in flight left, PSI measured while it ran: refaulted taken as 0, not confirmed"
	case !r.refaultKnown:
		v.Why = "refault rate not measured yet, PSI below the thresholds: refaulted taken as 0"
	}
	v.NonReclaimable = nonReclaimableAvailable(o, est)
	v.Confirmed = !restarting && confirmed(v, cfg)
	v.Effective = v.NonReclaimable
	if v.Confirmed {
		v.Effective = min(v.WorkingSet, v.NonReclaimable)
	}
	return v
}

// scopeOf returns the scope a memory signal's estimate is taken from (the node, or the pods cgroup for
// allocatableMemory.available) and that scope's memory.stat in snap (nil when not read).
func scopeOf(sig signal.Signal, snap signal.Snapshot) (string, *signal.MemoryStat) {
	if sig == signal.AllocatableMemoryAvailable {
		return scopePods, snap.PodsMemory
	}
	return scopeNode, snap.NodeMemory
}

// scopeName is the name of sig's scope (scopeOf without a snapshot).
func scopeName(sig signal.Signal) string {
	name, _ := scopeOf(sig, signal.Snapshot{})
	return name
}

// nonReclaimableAvailable is o's available amount on the estimate est: capacity − (usage − reclaimable),
// the kubelet's value plus est's gain, at most the capacity.
func nonReclaimableAvailable(o signal.Observation, est Reclaim) int64 {
	return min(o.Capacity, o.Available+est.Gain())
}

// restarting reports a refault rate not measured yet because the windows restarted when a pod in flight
// left (st.restarted), less than a refault window ago, in a memory.stat that has the counter. PSI avg10
// then still covers the time the pod ran: it neither confirms pressure nor makes the estimate unknown
// (else the working set, which on cgroup v1 still holds the gone pod's cache, would evict the next pod
// for it), and nothing counts as refaulted until the rate is measured again.
func (st *State) restarting(now time.Time, r rates, stat *signal.MemoryStat, cfg ReclaimConfig) bool {
	return !r.refaultKnown && stat.WorkingsetRefaultFile != nil && !st.restarted.IsZero() &&
		now.Sub(st.restarted) < cfg.RefaultWindow
}

// psiLow reports a known PSI below both thresholds: no stall worth the name.
func psiLow(v ReclaimView, cfg ReclaimConfig) bool {
	return v.PSIKnown && v.SomeAvg10 < cfg.PSISomeAvg10 && v.FullAvg10 < cfg.PSIFullAvg10
}

// confirmed reports whether PSI (and the refault counters, when known) confirm memory pressure.
func confirmed(v ReclaimView, cfg ReclaimConfig) bool {
	if !v.PSIKnown || psiLow(v, cfg) {
		return false
	}
	switch {
	case v.ActivateKnown:
		return v.ActivateRate >= float64(cfg.RefaultRate)
	case v.RefaultKnown:
		return v.RefaultRate >= float64(cfg.RefaultRate)
	}
	return true
}

// memoryPSI returns the memory PSI of the pods cgroup (pods true, when there is one) or of the node.
func memoryPSI(psi []signal.Pressure, pods bool) (string, float64, float64, bool) {
	var node, podsCg *signal.Pressure
	for i := range psi {
		switch q := &psi[i]; {
		case q.Resource != "memory":
		case q.Scope == scopeNode:
			node = q
		case podsCg == nil:
			podsCg = q
		}
	}
	q := node
	if pods && podsCg != nil {
		q = podsCg
	}
	if q == nil {
		return "", 0, 0, false
	}
	full := 0.0
	if q.Full != nil {
		full = q.Full.Avg10
	}
	return q.Scope, q.Some.Avg10, full, true
}

// rates steps the scope's rate window.
func (st *State) rates(now time.Time, scope string, m *signal.MemoryStat, cfg ReclaimConfig) rates {
	w, r := st.windows[scope].observe(sampleOf(m, now), cfg.RefaultWindow, cfg.MinRateSpan)
	st.windows[scope] = w
	return r
}

// nonReclaimablePod returns the candidate with its working set replaced by its non-reclaimable usage,
// or unchanged when the pod's estimate is not known (its memory.stat lacks a field, or its refault rate
// is not measured yet while the node's PSI is not low).
func (st *State) nonReclaimablePod(now time.Time, c rank.Candidate, psiLow bool, cfg ReclaimConfig) (rank.Candidate, podReclaim) {
	pr := podReclaim{ref: candidateRef(c)}
	if c.Stats == nil || c.Stats.Memory == nil || c.Stats.MemoryWorkingSet == nil {
		return c, pr
	}
	// The sample's own time: the shell may hand the same stats to several steps (agent podStatsMaxAge).
	at := now
	if t := c.Stats.Time; !t.IsZero() && !t.After(now) {
		at = t
	}
	r := st.rates(at, c.UID, c.Stats.Memory, cfg)
	pr.rate, pr.rateKnown = r.refault, r.refaultKnown
	m := c.Stats.Memory
	pr.unmeasured = !r.refaultKnown && m.WorkingsetRefaultFile != nil && m.FileKnown() && *m.ActiveFile+*m.InactiveFile > 0
	if r.activateKnown {
		pr.rate, pr.rateKnown = r.activate, true
	}
	if !r.refaultKnown && !psiLow {
		return c, pr
	}
	est, ok := EstimateReclaim(c.Stats.Memory, r.refault, cfg.RefaultWindow)
	if !ok {
		return c, pr
	}
	pr.est, pr.known = est, true
	s := *c.Stats
	s.MemoryWorkingSet = signal.Uint64(uint64(est.NonReclaimable(int64(*c.Stats.MemoryWorkingSet))))
	c.Stats = &s
	return c, pr
}

func describeView(v ReclaimView, cfg ReclaimConfig) string {
	ws := threshold.FormatAvailable(v.WorkingSet, v.Signal)
	if !v.Known {
		return fmt.Sprintf("available %s by the working set: reclaim estimate unknown (%s): acting on the working set", ws, v.Why)
	}
	e := v.Estimate
	q := func(n int64) string { return threshold.FormatQuantity(n, true) }
	s := fmt.Sprintf("available %s by the working set, %s by the non-reclaimable estimate (file %s − dirty %s − writeback %s − refaulted %s = reclaimable %s)",
		ws, threshold.FormatAvailable(v.NonReclaimable, v.Signal), q(e.File), q(e.Dirty), q(e.Writeback), q(e.Refaulted), q(e.Reclaimable))
	s += "; " + describeStall(v, cfg)
	if v.Why != "" {
		s += " (" + v.Why + ")"
	}
	switch {
	case v.Confirmed:
		return s + ": confirmed, acting on the lower, " + threshold.FormatAvailable(v.Effective, v.Signal)
	case v.Steady != "":
		return s + fmt.Sprintf(": the working set is within %s of the kubelet's threshold %s but %s: not the backstop, "+
			"acting on the non-reclaimable estimate", threshold.FormatQuantity(cfg.KubeletMargin, true),
			threshold.FormatAvailable(v.Kubelet, v.Signal), v.Steady)
	case v.Backstop:
		return s + fmt.Sprintf(": the working set is within %s of the kubelet's threshold %s (the kubelet is about to evict), acting on the lower, %s",
			threshold.FormatQuantity(cfg.KubeletMargin, true), threshold.FormatAvailable(v.Kubelet, v.Signal),
			threshold.FormatAvailable(v.Effective, v.Signal))
	}
	return s + ": not confirmed, acting on the non-reclaimable estimate"
}

func describeStall(v ReclaimView, cfg ReclaimConfig) string {
	s := "PSI unknown"
	if v.PSIKnown {
		s = fmt.Sprintf("PSI %s some %.2f%% full %.2f%% (confirm at %.0f%%/%.0f%%)", v.PSIScope, v.SomeAvg10, v.FullAvg10,
			cfg.PSISomeAvg10, cfg.PSIFullAvg10)
	}
	rate := func(known bool, r float64) string {
		if !known {
			return "unknown"
		}
		return threshold.FormatQuantity(int64(r), true) + "/s"
	}
	return s + fmt.Sprintf(", refaults %s, activations %s (confirm at %s/s)", rate(v.RefaultKnown, v.RefaultRate),
		rate(v.ActivateKnown, v.ActivateRate), threshold.FormatQuantity(cfg.RefaultRate, true))
}

// workingSets returns the pods' working sets by UID when a view acts on the working set, else nil.
func workingSets(views []ReclaimView, pods []Pod) map[string]int64 {
	bound := false
	for _, v := range views {
		bound = bound || wsBound(views, v.Signal)
	}
	if !bound {
		return nil
	}
	out := make(map[string]int64, len(pods))
	for _, p := range pods {
		if s := p.Candidate.Stats; s != nil && s.MemoryWorkingSet != nil {
			out[p.Candidate.UID] = int64(*s.MemoryWorkingSet)
		}
	}
	return out
}

// viewOf returns sig's view among views.
func viewOf(views []ReclaimView, sig signal.Signal) (ReclaimView, bool) {
	for _, v := range views {
		if v.Signal == sig {
			return v, true
		}
	}
	return ReclaimView{}, false
}

// wsBound reports whether sig's view acts on the working set although the pods are ranked by their
// non-reclaimable usage: confirmed pressure with the working set the lower of the two.
func wsBound(views []ReclaimView, sig signal.Signal) bool {
	v, ok := viewOf(views, sig)
	return ok && v.Known && (v.Confirmed || (v.Backstop && !v.Held)) && v.WorkingSet < v.NonReclaimable
}

// backstopGoal returns the goal of a signal acted on through the backstop alone (its working set, lower
// than the non-reclaimable estimate, nothing confirming pressure): the kubelet's threshold plus the
// backstop's margin, where the backstop stops acting. The agent's own threshold applies to the estimate;
// on the working set the backstop only keeps the kubelet from acting, so it frees what takes the working
// set out of the kubelet's reach and not the agent's threshold + minimum reclaim, which a page-cache pod's
// cache counts against (a hog started beside a pod reading its cache in a loop had the agent evict both
// in one plan on the real node: reclaim-backstop-hog.txt). false when the signal is not acted on so.
func backstopGoal(views []ReclaimView, sig signal.Signal, cfg ReclaimConfig) (int64, bool) {
	v, ok := viewOf(views, sig)
	return v.Kubelet + cfg.KubeletMargin, ok && v.Known && v.KubeletKnown && !v.Confirmed && v.Backstop && !v.Held &&
		v.WorkingSet < v.NonReclaimable
}

// kubeletHard returns the kubelet's resolved hard threshold of each observed memory signal (the
// highest when there are several).
func kubeletHard(kc threshold.Config, snap signal.Snapshot) map[signal.Signal]int64 {
	out := map[signal.Signal]int64{}
	for _, t := range kc.Thresholds {
		o, ok := snap.Observations[t.Signal]
		if !ok || !t.Signal.IsMemory() || !t.IsHard() || t.Inert() {
			continue
		}
		if v := t.Value.Resolve(o.Capacity); v > out[t.Signal] {
			out[t.Signal] = v
		}
	}
	return out
}
