package sim

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// Agent is the seam to a node agent's policy: on each of its syncs it steps on a fresh snapshot of
// the node and returns the pods to evict. An Agent keeps its own state between steps and must be
// deterministic: the same inputs give the same plans. The simulator calls NewAgent for every run.
type Agent interface {
	Step(in AgentInput) AgentPlan
}

// AgentInput is what the agent's shell hands its policy at one sync.
type AgentInput struct {
	Now time.Time
	// Snapshot holds the node's memory observations and the pods' stats, both measured now (the
	// agent reads the cgroups itself; no cache).
	Snapshot signal.Snapshot
	// Candidates are the active pods with their stats, by namespace/name, the pods whose eviction
	// this agent requested included (see Deletion).
	Candidates []rank.Candidate
	// Deletion holds, by UID, the deletion timestamp (the end of the grace period) of the pods this
	// agent evicted that still run: they are terminating.
	Deletion map[string]time.Time
	// PDB holds the UIDs of the pods a PodDisruptionBudget protects: the simulated Eviction API refuses
	// their evictions, a DELETE is accepted.
	PDB map[string]bool
	// Created holds, by UID, when each candidate appeared on the node (its creation, for loop detection).
	Created map[string]time.Time
}

// AgentPlan is what one step decided.
type AgentPlan struct {
	// Evictions are the pods to evict now, in order.
	Evictions []AgentEviction
	// Taint says whether the node should carry the agent's pressure taint.
	Taint bool
	// Thresholds are the agent's resolved thresholds (available bytes) by signal: the poll wakes the
	// agent when a signal crosses one, and the plot draws them.
	Thresholds map[signal.Signal]int64
	// Kills are the UIDs of pods to SIGKILL on the node now (the trend kill): their memory is free at
	// once.
	Kills []string
	// Reclaims are the pods whose page cache to reclaim now (the reclaim rung), before any eviction.
	Reclaims []AgentReclaim
	// Avoidances are the avoidances of the node in force after the step: a new pod of an avoided owner
	// is kept off the node until the avoidance ends (the chart's admission policy).
	Avoidances []policy.Avoidance
}

// AgentReclaim is one reclaim of a pod's page cache: Bytes asked of the kernel.
type AgentReclaim struct {
	UID   string
	Bytes int64
}

// AgentEviction is one pod the agent evicts.
type AgentEviction struct {
	UID    string
	Signal signal.Signal
	// Why says in one line why this pod and now (threshold, need, rank).
	Why string
	// Rank and Ranked place the pod in the ranking the policy walked; DecidedBy is the key that put
	// it before the next.
	Rank, Ranked int
	DecidedBy    string
	GraceSeconds int64
	Message      string
	// Threshold describes the threshold acted on ("" : the agent's resolved threshold of Signal).
	Threshold string
	// Rung is the rung that ended the pod (policy.RungEviction, policy.RungDelete); After is how long
	// the agent's escalation waited before it (the PodDisruptionBudget fallback wait, and the waits of
	// the plan's evictions before this one: the shell carries them out one after the other). Refused:
	// a PodDisruptionBudget refused and the ladder stopped (a soft threshold, or no DELETE fallback);
	// the pod keeps running.
	Rung    string
	After   time.Duration
	Refused bool
	// Avoidance is the owner's avoidance of the node once the eviction is carried out (zero Until: none;
	// the owner is not policy.Avoidable, the loop breaker is off, or the eviction was refused); Loop is
	// set when the eviction closes an eviction loop (the avoidance is then escalated).
	Avoidance policy.Avoidance
	Loop      *policy.EvictionLoop
}

// agent drives an Agent in one run: its periodic syncs, its poll wake-ups and its taint.
type agent struct {
	a        Agent
	timing   AgentTiming
	taintKey string
	// levels are the agent's thresholds of the last plan; below says on which side of each the last
	// poll saw the signal; lastSeen is the available amount of each signal at the last sync.
	levels   map[signal.Signal]int64
	below    map[signal.Signal]bool
	lastSeen map[signal.Signal]int64
	lastPoll time.Time
	nextPoll time.Duration // wait after lastPoll (policy.NextPoll of the last poll's margin)
	tainted  bool
	// avoid holds the avoidances of the node in force at the last sync, by owner UID, with when each
	// was first seen.
	avoid map[string]avoidance
	// busyUntil is when the shell is done carrying out the last plan's evictions (Timing.AgentRequest
	// each): no sync starts before it.
	busyUntil time.Time
}

// wake reports whether the agent's poll wakes it at a tick with these observations: a crossing of
// one of its thresholds, or a change of more than PollDelta since the last sync.
func (g *agent) wake(obs map[signal.Signal]signal.Observation, t time.Time) (string, bool) {
	if g.timing.PollInterval <= 0 || !g.lastPoll.IsZero() && t.Sub(g.lastPoll) < max(g.nextPoll, g.timing.PollInterval) {
		return "", false
	}
	g.lastPoll = t
	why := ""
	margin := int64(math.MaxInt64)
	for _, sig := range sortedSignals(obs) {
		o := obs[sig]
		if level, ok := g.levels[sig]; ok {
			margin = min(margin, o.Available-level)
			below := o.Available < level
			if prev, seen := g.below[sig]; seen && prev != below && why == "" {
				why = fmt.Sprintf("%s crossed %s", sig, formatMi(level))
			}
			g.below[sig] = below
		}
		if last, ok := g.lastSeen[sig]; ok && g.timing.PollDelta > 0 && abs(o.Available-last) > g.timing.PollDelta && why == "" {
			why = fmt.Sprintf("%s moved %s", sig, formatMi(o.Available-last))
		}
	}
	g.nextPoll = policy.NextPoll(margin, g.timing.PollInterval, g.timing.PollMaxInterval, g.timing.PollRampRate)
	return why, why != ""
}

// sync runs one step of the agent at t.
func (g *agent) sync(r *run, t time.Time, trigger string) {
	mem := r.node.memory(t)
	obs := observations(mem, t)
	var pods []PodInfo
	deletion, pdb, created := map[string]time.Time{}, map[string]bool{}, map[string]time.Time{}
	for _, p := range r.node.active(t) {
		created[p.Candidate.UID] = p.Since
		if p.PDB {
			pdb[p.Candidate.UID] = true
		}
		k, ok := r.node.killed[p.Candidate.UID]
		switch {
		case ok && k.by == ActorKubelet:
			continue // the kubelet's kill: Failed for the agent's informer at once
		case ok:
			deletion[p.Candidate.UID] = k.deletion
		}
		pods = append(pods, p)
	}
	cands := candidates(pods, func(uid string) (signal.PodStats, bool) { return r.node.stats(uid, t) })
	snap := signal.Snapshot{Observations: obs, Pods: map[string]signal.PodStats{}}
	for _, c := range cands {
		if c.Stats != nil {
			snap.Pods[c.UID] = *c.Stats
		}
	}
	snap.PodsMemory = podsMemory(cands)
	plan := g.a.Step(AgentInput{Now: t, Snapshot: snap, Candidates: cands, Deletion: deletion, PDB: pdb, Created: created})
	g.avoiding(t, plan.Avoidances)
	g.lastSeen = map[signal.Signal]int64{}
	for sig, o := range obs {
		g.lastSeen[sig] = o.Available
	}
	g.levels = plan.Thresholds
	g.setTaint(r, t, plan.Taint)
	for _, q := range plan.Reclaims {
		for _, c := range cands {
			if c.UID == q.UID {
				freed := r.node.reclaim(q.UID, q.Bytes, t)
				r.add(Event{At: t, Actor: ActorAgent, Kind: KindReclaim, Subject: podName(c),
					Detail: fmt.Sprintf("reclaimed %s of file pages instead of evicting (asked %s)", FormatBytes(freed), FormatBytes(q.Bytes))})
			}
		}
	}
	for i, ev := range plan.Evictions {
		g.evict(r, t, time.Duration(i)*r.timing.AgentRequest, ev, cands, obs, trigger)
	}
	g.busyUntil = t.Add(time.Duration(len(plan.Evictions)) * r.timing.AgentRequest)
	for _, uid := range plan.Kills {
		for _, c := range cands {
			if c.UID == uid {
				r.node.evict(uid, kill{by: ActorAgent, at: t, released: t, cleaned: t, deletion: t})
				r.add(Event{At: t, Actor: ActorAgent, Kind: KindKill, Subject: podName(c),
					Detail: "SIGKILL on the node: the memory trend reaches the OOM killer before the eviction completes"})
			}
		}
	}
}

// evict carries out one planned eviction of the step at t, after the plan's evictions before it
// (queued: their requests' time).
func (g *agent) evict(r *run, t time.Time, queued time.Duration, ev AgentEviction, cands []rank.Candidate,
	obs map[signal.Signal]signal.Observation, trigger string) {
	var c *rank.Candidate
	for i := range cands {
		if cands[i].UID == ev.UID {
			c = &cands[i]
		}
	}
	if c == nil {
		return // not an active pod: the policy's mistake, nothing to evict
	}
	_, terminating := r.node.killed[ev.UID]
	info := &Eviction{Pod: podName(*c), UID: ev.UID, Signal: string(ev.Signal), Rank: ev.Rank, Ranked: ev.Ranked,
		DecidedBy: ev.DecidedBy, GraceSeconds: ev.GraceSeconds, Message: ev.Message, Terminating: terminating}
	if o, ok := obs[ev.Signal]; ok {
		info.Available = formatMi(o.Available)
	}
	if level, ok := g.levels[ev.Signal]; ok {
		info.Threshold = formatMi(level)
	}
	if ev.Threshold != "" {
		info.Threshold = ev.Threshold
	}
	if c.Stats != nil {
		info.Usage = formatMi(workingSet(*c.Stats))
		info.StatsAge = Duration(t.Sub(c.Stats.Time))
	}
	if ev.Refused {
		r.add(Event{At: t.Add(queued + ev.After), Actor: ActorAgent, Kind: KindRefused, Subject: info.Pod,
			Detail: joinNonEmpty("; ", "refused by a PodDisruptionBudget: the pod keeps running", ev.Why)})
		return
	}
	if ev.Rung != string(policy.RungEviction) {
		info.Rung = ev.Rung
	}
	at := t.Add(queued + ev.After)
	took := r.timing.AgentEviction
	if rw, ok := r.world.(releaser); ok && r.releases {
		if d, ok := rw.ReleaseAfter(ev.UID); ok {
			took = max(0, r.timing.AgentRequest+d) // the recorded request started AgentRequest before its ledger time
		}
	}
	r.node.evict(ev.UID, kill{by: ActorAgent, at: at, released: at.Add(took),
		cleaned: at.Add(took), deletion: at.Add(time.Duration(ev.GraceSeconds) * time.Second)})
	brief := *info
	brief.Rank = 0 // ev.Why gives the rank and the release
	info.Avoidance = avoidanceInfo(ev, r.start)
	r.add(Event{At: at, Actor: ActorAgent, Kind: KindEvict, Subject: info.Pod, Eviction: info,
		Detail: joinNonEmpty("; ", evictDetail(&brief, trigger), ev.Why)})
	if info.Avoidance != nil {
		r.add(Event{At: at, Actor: ActorAgent, Kind: KindAvoid, Subject: info.Avoidance.Owner, Detail: info.Avoidance.words(info.Pod)})
	}
}

func (g *agent) setTaint(r *run, t time.Time, on bool) {
	if on == g.tainted || g.taintKey == "" {
		return
	}
	g.tainted = on
	detail := "removed: the pressure is over (and its hysteresis)"
	if on {
		detail = "added: under pressure"
	}
	r.add(Event{At: t, Actor: ActorAgent, Kind: KindTaint, Subject: g.taintKey + ":NoSchedule", Detail: detail})
}

func sortedSignals(obs map[signal.Signal]signal.Observation) []signal.Signal {
	out := make([]signal.Signal, 0, len(obs))
	for s := range obs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// podsMemory sums the pods' memory.stat into the pods cgroup's (nil when no pod has one): the page cache
// the model gives the pods is all the pods cgroup holds.
func podsMemory(cands []rank.Candidate) *signal.MemoryStat {
	var sum uint64
	found := false
	for _, c := range cands {
		if c.Stats != nil && c.Stats.Memory != nil && c.Stats.Memory.ActiveFile != nil {
			sum += *c.Stats.Memory.ActiveFile
			found = true
		}
	}
	if !found {
		return nil
	}
	z := signal.Uint64(0)
	return &signal.MemoryStat{ActiveFile: signal.Uint64(sum), InactiveFile: z, Dirty: z, Writeback: z,
		WorkingsetRefaultFile: z, WorkingsetActivateFile: z, PageSize: 4096}
}
