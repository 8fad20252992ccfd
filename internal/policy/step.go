package policy

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Step runs one sync of the policy and returns the new State and the Plan. It is pure: the same State
// and Input always give the same result, and neither is modified.
func Step(prev State, in Input) (State, Plan) {
	st := prev.clone()
	cfg := in.Config
	p := Plan{Policy: cfg.Policy, Observed: len(in.Snapshot.Observations) > 0}
	st.applyOutcomes(in.Outcomes, cfg, &p)
	if !p.Observed {
		p.tr().add(decision.KindNothing, "", "the node could not be read: nothing decided")
		st.finish(in.Now, cfg, &p)
		return st, p
	}
	if !cfg.Policy.Valid() {
		p.Warnings = append(p.Warnings, fmt.Sprintf("policy %q: want %q, %q or %q; acting as %q", cfg.Policy, Pressure, Kubelet,
			ReclaimAware, Pressure))
		cfg.Policy = Pressure
	}
	kc := st.kubeletThresholds(in.Kubelet, in.Snapshot.Filesystems, &p)
	snap, pods := in.Snapshot, sortedPods(in.Pods)
	var ws map[string]int64
	var ests []podReclaim
	var grows map[signal.Signal]growth
	raw := pods
	if cfg.Policy == ReclaimAware {
		st.quietReclaimed(in.Reclaims, cfg.Reclaim.MinRateSpan)
		snap, pods, ests = st.reclaimView(in.Now, in.Snapshot, pods, kubeletHard(kc, in.Snapshot), cfg.Reclaim, rungOff(cfg, in) == "", &p)
	}
	st.forget(in.Now, pods, cfg)
	st.adopt(in.Now, pods, in.InFlight, cfg)
	falls := st.fallsNow(snap)
	p.Thresholds, p.Headroom = thresholdsFor(cfg.Policy, kc, snap, in.Snapshot.Filesystems, cfg.Headroom)
	p.Thresholds = st.leadRaise(in.Now, p.Thresholds, snap, falls, cfg, &p)
	if cfg.Policy == ReclaimAware {
		grows = st.growths(in.Now, p.Reclaim, cfg) // after adopt: the flights are this step's
		snap = st.reclaimRung(in.Now, in, snap, ests, grows, cfg, &p)
		ws = workingSets(p.Reclaim, raw)
		falls = st.fallsNow(snap) // the next step's lead compares with what this one acted on
	}
	for _, n := range p.Headroom {
		if n.Withheld != "" {
			p.tr().add(KindHeadroom, string(n.Signal), idString(p.Thresholds, n.Threshold)+": no headroom: "+n.Withheld)
		}
	}
	p.Watch = watches(p.Thresholds, snap.Observations)
	st.track(in.Now, snap, p.Thresholds, p.Watch, &p)
	din := st.decisionInput(in.Now, snap, in.Snapshot, pods, cfg, in.KubeletSemantics, &p)
	prevDecision := st.decision
	st.decision, p.Decision = decisionStep(prevDecision, din, in.Reclaimable, kc.ImageGCHigh(), &p)
	victims, hard := st.choose(prevDecision, din, pods, cfg, in.Persisting, ws, grows, &p)
	st.plan(in.Now, victims, hard, snap, cfg, &p)
	st.remember(snap)
	st.falls = falls
	st.see(in.Now, pods, in.Snapshot)
	st.finish(in.Now, cfg, &p)
	return st, p
}

// sortedPods gives the core a stable input order: by namespace/name, then UID (an informer's order is a
// map's).
func sortedPods(pods []Pod) []Pod {
	out := append([]Pod(nil), pods...)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Candidate, out[j].Candidate
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.UID < b.UID
	})
	return out
}

// decisionInput builds the core's input. Kubelet: every active pod (not Terminal), the raw snapshot.
// Pressure: the active pods whose eviction is not under way, on the snapshot credited with the in-flight pods' usage (memory,
// threads and measured disk usage). The local ephemeral-storage limit path is left to the kubelet.
func (st *State) decisionInput(now time.Time, snap, raw signal.Snapshot, pods []Pod, cfg Config, sem decision.Semantics,
	p *Plan) decision.Input {
	din := decision.Input{Now: now, Snapshot: snap, Config: p.Thresholds, DisableLocalStorageCapacityIsolation: true,
		Semantics: sem}
	for _, pod := range pods {
		if pod.Terminal {
			continue
		}
		if cfg.Policy == Kubelet || !st.inFlight(pod) {
			din.Candidates = append(din.Candidates, pod.Candidate)
		}
	}
	if cfg.Policy != Kubelet {
		p.Credits = st.credit(now, pods, raw, cfg, p)
		din.Snapshot = credited(snap, p.Credits)
	}
	return din
}

// decisionStep runs decision.Step. A disk step that asks for node-level reclaim (container and image
// garbage collection, which are the kubelet's: the agent does not run them) is completed on the shell's
// estimate r of what they could free: when that relieves every threshold (with its minimum reclaim) no
// pod is evicted and the kubelet's garbage collection reclaims first; when it does not, or r is nil
// (unknown), the step goes on as if reclaim freed nothing and pods are evicted.
func decisionStep(prev decision.State, in decision.Input, r *Reclaimable, gcHigh int32, p *Plan) (decision.State, decision.Decision) {
	next, d := decision.Step(prev, in)
	if d.NodeReclaim == nil || !d.NodeReclaim.Pending {
		return next, d
	}
	nr := d.NodeReclaim
	after := in.Snapshot
	if r != nil {
		after = afterReclaim(in.Snapshot, nr.Actions, r, gcHigh)
	}
	in.AfterReclaim = &after
	next, d = decision.Step(prev, in)
	switch {
	case r == nil:
		p.tr().add(KindReclaim, string(nr.Signal), fmt.Sprintf("%v: what it could free is not known: counted as nothing", nr.Actions))
	case d.NodeReclaim != nil && d.NodeReclaim.Succeeded:
		p.tr().add(KindReclaim, string(nr.Signal), fmt.Sprintf("%v could free enough (%s): no pod evicted, the kubelet's garbage "+
			"collection reclaims it first", nr.Actions, reclaimWords(nr.Actions, r, gcHigh)))
	default:
		p.tr().add(KindReclaim, string(nr.Signal), fmt.Sprintf("%v could free %s: not enough, pods are evicted", nr.Actions,
			reclaimWords(nr.Actions, r, gcHigh)))
	}
	return next, d
}

// choose returns the victims of this step and whether their threshold is hard.
//
// ws holds, for policy ReclaimAware when the acted-on view is the working set (confirmed pressure where
// the working set is lower than the non-reclaimable estimate), the pods' working sets by UID: what an
// eviction frees of that view. Without it a pod frees its (ranked) non-reclaimable usage. grows is each
// memory signal's growth at this step (policy ReclaimAware).
func (st *State) choose(prev decision.State, din decision.Input, pods []Pod, cfg Config, persisting bool,
	ws map[string]int64, grows map[signal.Signal]growth, p *Plan) ([]victim, bool) {
	pr := decision.PredictOrder(prev, din, decision.PredictOptions{IgnoreGrace: persisting})
	d := p.Decision
	var ev decision.Eviction
	ranking := d.Ranking
	switch first, ok := firstVictim(pr); {
	case persisting && d.NodeReclaim != nil && d.NodeReclaim.Succeeded: // the prediction does not know reclaim
		p.tr().add(decision.KindNothing, "", "no pod to evict at this step (see the decision's trace)")
		return nil, false
	case !persisting && len(d.Evictions) > 0:
		ev = d.Evictions[0]
	case persisting && ok:
		ev, ranking = first, pr.Ranking
	default:
		p.tr().add(decision.KindNothing, "", "no pod to evict at this step (see the decision's trace)")
		return nil, false
	}
	hard := p.Thresholds.Thresholds[ev.Threshold].IsHard()
	if cfg.Policy == Kubelet {
		byUID := make(map[string]Pod, len(pods))
		for _, pod := range pods {
			byUID[pod.Candidate.UID] = pod
		}
		return st.kubeletVictim(ev, ranking, din.Snapshot.Filesystems, byUID, hard, cfg, p), hard
	}
	if pr.Ranking == nil {
		return nil, hard
	}
	maxPods := cfg.MaxEvictionsPerSync
	if !ev.Signal.IsMemory() {
		maxPods = 1 // disk, inodes, PIDs: one victim per step, re-measured before the next
	}
	t := target(p.Thresholds, ev.Threshold, din.Snapshot.Observations, maxPods)
	goalWhy := "threshold + minimum reclaim"
	switch narrowed, evict := backstop(&t, grows[t.Signal], cfg, p); {
	case !evict:
		return nil, hard
	case narrowed:
		goalWhy = t.GoalWhy
	}
	p.Target = &t
	p.tr().add(KindTarget, string(t.Signal), fmt.Sprintf("%s: available %s (credited), goal %s (%s): need %s, at most %d pods",
		idString(p.Thresholds, t.Threshold), formatRelease(t.Signal, Release{Amount: t.Available, Known: true}),
		formatRelease(t.Signal, Release{Amount: t.Goal, Known: true}), goalWhy, formatRelease(t.Signal, Release{Amount: t.Need, Known: true}), t.Max))
	if !wsBound(p.Reclaim, t.Signal) {
		ws = nil
	}
	var grow map[string]float64
	if v, ok := viewOf(p.Reclaim, t.Signal); ok && ws != nil && goalWhy == t.GoalWhy {
		grow = st.growthCover(&t, v, grows[v.Signal], pr, cfg, p)
	}
	return st.walkToTarget(pr, t, din.Snapshot.Filesystems, hard, ws, grow, cfg, p), hard
}

// backstop narrows t to the backstop's goal (policy ReclaimAware: the kubelet's threshold + the backstop's
// margin) when that is below t's; narrowed says it did. evict is false when nothing more is to be evicted,
// said in p's trace: the goal is met once the evictions under way complete, or the shortfall is the growth
// of the pods in flight (g, t's signal's growth at this step).
func backstop(t *Target, g growth, cfg Config, p *Plan) (narrowed, evict bool) {
	goal, ok := backstopGoal(p.Reclaim, t.Signal, cfg.Reclaim)
	if !ok || goal >= t.Goal {
		return false, true
	}
	id := idString(p.Thresholds, t.Threshold)
	avail, goalS := formatRelease(t.Signal, Release{Amount: t.Available, Known: true}), formatRelease(t.Signal, Release{Amount: goal, Known: true})
	if goal <= t.Available {
		// Another eviction would be more than needed (seen on the v2 guest: the reader evicted 0.5 s after
		// the hog beside it, its credit already above the goal).
		p.tr().add(KindTarget, string(t.Signal), fmt.Sprintf("%s: available %s (credited with the evictions under way) is at or above "+
			"the backstop's goal %s (the kubelet's threshold + the backstop's margin): they keep the kubelet from acting; "+
			"nothing more to evict", id, avail, goalS))
		return false, false
	}
	if dying := g.dying(); dying != "" {
		// The credit counts what the pods in flight held at the request: the shortfall is their growth
		// since, and they free it when they die (the rung's hold, rungStep, without the rung; seen on the
		// v2 guest: the reader evicted 0.6 s after the hog, 1.9Mi short).
		p.tr().add(KindTarget, string(t.Signal), fmt.Sprintf("%s: available %s (credited) is below the backstop's goal %s, but %s: "+
			"not evicting more", id, avail, goalS, dying))
		return false, false
	}
	t.Goal, t.Need = goal, goal-t.Available
	t.GoalWhy = "the kubelet's threshold + the backstop's margin: the working set is acted on only to keep the kubelet from acting"
	return true, true
}

// firstVictim returns the first non-critical pod of a prediction.
func firstVictim(pr decision.Prediction) (decision.Eviction, bool) {
	for _, o := range pr.Order {
		if !o.Critical {
			return o.Eviction, true
		}
	}
	return decision.Eviction{}, false
}

// finish sets the wanted taint and the API backoff of the plan.
func (st *State) finish(now time.Time, cfg Config, p *Plan) {
	p.Taint = st.taint(now, cfg)
	p.tr().add(KindTaint, p.Taint.Value, fmt.Sprintf("wanted %t (last under pressure %s, hysteresis %s)", p.Taint.Want,
		stampOrNever(st.lastPressure), cfg.TaintHysteresis))
	if st.backoff.blocked(now) {
		p.APIBackoffUntil = st.backoff.until
	}
}

func stampOrNever(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return stamp(t)
}

// candidateRef names a candidate.
func candidateRef(c rank.Candidate) PodRef {
	return PodRef{UID: c.UID, Namespace: c.Namespace, Name: c.Name}
}

// plan turns the victims into requests, deferrals and kills, and starts their flights: a planned
// eviction is in flight from now, so a step that runs before its outcome is known never plans it again.
func (st *State) plan(now time.Time, victims []victim, hard bool, snap signal.Snapshot, cfg Config, p *Plan) {
	if len(victims) == 0 {
		return
	}
	blocked := !cfg.DryRun && st.backoff.blocked(now)
	avail := st.available(now, cfg)
	for _, v := range victims {
		ref := candidateRef(v.cand)
		switch {
		case blocked:
			p.Deferred = append(p.Deferred, Deferral{Pod: ref, Reason: "API backoff", Until: st.backoff.until})
			p.tr().add(KindLimit, ref.String(), "API backoff until "+stamp(st.backoff.until)+": not requested")
		case avail == 0:
			until := st.tokens[0].at.Add(time.Minute)
			p.Deferred = append(p.Deferred, Deferral{Pod: ref, Reason: fmt.Sprintf("maxEvictionsPerMinute (%d) reached", cfg.MaxEvictionsPerMinute), Until: until})
			p.tr().add(KindLimit, ref.String(), fmt.Sprintf("%d requests in the last minute: not requested before %s", len(st.tokens), stamp(until)))
			continue
		default:
			avail--
			e := st.request(now, v, hard, snap, p.Thresholds)
			if lw := p.LeadWhy(e.Signal); lw != "" {
				e.Why = lw + "; " + e.Why
			}
			p.Evictions = append(p.Evictions, e)
		}
		if k, ok := st.trendKill(v, hard, snap.Observations, cfg, p); ok {
			p.Kills = append(p.Kills, k)
			f, ok := st.flights[ref.UID]
			if !ok {
				f = st.bound(v.cand, now, "killed")
			}
			f.killing = true
			st.flights[ref.UID] = f
		}
	}
}

// request records one eviction request: its token, its flight and, for the first of the episode, the
// estimated crossing (detection latency).
func (st *State) request(now time.Time, v victim, hard bool, snap signal.Snapshot, cfg threshold.Config) Eviction {
	observed, limit := describe(cfg, v.ev.Threshold, snap.Observations)
	e := Eviction{Eviction: v.ev, Rank: v.rank, Release: v.release, Hard: hard, ObservedText: observed, ThresholdText: limit, Why: v.why}
	if at, ok := st.crossing[v.ev.Signal]; ok {
		e.Crossing = at
		delete(st.crossing, v.ev.Signal)
	}
	st.tokens = append(st.tokens, token{at: now, uid: v.ev.UID})
	f := st.bound(v.cand, now, "eviction requested")
	f.evicting, f.hard = true, hard
	st.flights[v.ev.UID] = f
	return e
}

// fs names a filesystem of the layout.
type fs int

const (
	nodeFS fs = iota
	imageFS
)

// fsOf returns the filesystem a disk signal observes.
func fsOf(sig signal.Signal, l signal.FilesystemLayout) fs {
	switch sig {
	case signal.ImageFsAvailable, signal.ImageFsInodesFree:
		if l.DedicatedImageFs {
			return imageFS
		}
	case signal.ContainerFsAvailable, signal.ContainerFsInodesFree:
		if l.DedicatedImageFs && !l.SplitContainerFs {
			return imageFS
		}
	}
	return nodeFS
}

// freed returns what the reclaim actions would free on filesystem f by the estimate r: image GC the
// unused images (on the image filesystem; not when image GC is off), container GC the terminated pods'
// logs (on nodefs).
func freed(f fs, l signal.FilesystemLayout, actions []decision.ReclaimAction, r *Reclaimable, gcHigh int32) int64 {
	if r == nil {
		return 0
	}
	images := nodeFS
	if l.DedicatedImageFs {
		images = imageFS
	}
	var n int64
	for _, a := range actions {
		switch {
		case a == decision.ImageGC && f == images && gcHigh < 100:
			n += r.UnusedImages
		case a == decision.ContainerGC && f == nodeFS:
			n += r.DeadContainerLogs
		}
	}
	return n
}

// afterReclaim returns the snapshot the reclaim actions would leave: every filesystem's available bytes
// raised by what they would free there (capped at capacity). Inode signals are unchanged: what the
// images hold in inodes is not estimated.
func afterReclaim(s signal.Snapshot, actions []decision.ReclaimAction, r *Reclaimable, gcHigh int32) signal.Snapshot {
	out := s
	out.Observations = make(map[signal.Signal]signal.Observation, len(s.Observations))
	for sig, o := range s.Observations {
		if sig.Bytes() && !sig.IsMemory() {
			o.Available = min(o.Capacity, o.Available+freed(fsOf(sig, s.Filesystems), s.Filesystems, actions, r, gcHigh))
		}
		out.Observations[sig] = o
	}
	return out
}

// reclaimWords says what the estimate counts, for the trace.
func reclaimWords(actions []decision.ReclaimAction, r *Reclaimable, gcHigh int32) string {
	var parts []string
	for _, a := range actions {
		switch {
		case a == decision.ImageGC && gcHigh >= 100:
			parts = append(parts, "image GC is off (imageGCHighThresholdPercent 100)")
		case a == decision.ImageGC:
			parts = append(parts, formatRelease(signal.NodeFsAvailable, Release{Amount: r.UnusedImages, Known: true})+" of unused images")
		case a == decision.ContainerGC:
			parts = append(parts, formatRelease(signal.NodeFsAvailable, Release{Amount: r.DeadContainerLogs, Known: true})+
				" of terminated pods' logs")
		}
	}
	s := strings.Join(parts, ", ")
	if r.Source != "" {
		s += fmt.Sprintf(" (from %s)", r.Source)
	}
	return s
}
