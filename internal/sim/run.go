package sim

import (
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Options configure Simulate.
type Options struct {
	// Node and Source name the node and where the timeline came from, for the output.
	Node, Source string
	// Seed is the seed the World's rand was made with, for the output.
	Seed int64
	// Kubelet is the kubelet's eviction configuration, containerfs thresholds already derived.
	Kubelet                              threshold.Config
	DisableLocalStorageCapacityIsolation bool
	// KubeletSemantics is the kubelet release the simulated kubelet follows (zero: the pinned 1.37).
	KubeletSemantics decision.Semantics
	Timing           Timing
	// NewAgent returns a fresh agent policy; nil simulates the kubelet alone.
	NewAgent    func() Agent
	AgentTiming AgentTiming
	// AgentTaintKey is the key of the agent's NoSchedule taint.
	AgentTaintKey string
	// RecordedReleases makes the agent's eviction of a pod the recorded agent evicted free its memory as
	// long after the request as the recording shows (a World's ReleaseAfter); other pods, and every pod
	// when false, take Timing.AgentEviction.
	RecordedReleases bool
}

// run is one simulation run: the event queue, the node with the run's evictions, the actors, and
// what happened.
type run struct {
	name    string
	world   World
	node    *node
	timing  Timing
	q       queue
	start   time.Time
	kubelet *kubelet
	agent   *agent
	wakeWhy string

	events  []Event
	order   int
	below   map[string]bool // threshold line → available below it at the last tick
	samples []sample
	// releases: Options.RecordedReleases.
	releases bool
}

// Simulate replays the world through the kubelet alone and, when o.NewAgent is set, through
// pressure-agent with the kubelet behind it. It is deterministic: the same world and options give
// the same Result.
func Simulate(w World, o Options) Result {
	start, end := w.Span()
	res := Result{Node: o.Node, Source: o.Source, Start: start, End: end, Seed: o.Seed, Timing: o.Timing,
		Thresholds: kubeletLines(o.Kubelet, w.Memory(start)), Kubelet: describeKubelet(o)}
	kr, _ := simulateRun(w, o, RunKubelet)
	res.Runs = append(res.Runs, kr)
	res.Runs[0].Title = "the kubelet alone"
	if o.NewAgent != nil {
		ar, levels := simulateRun(w, o, RunAgent)
		ar.Title = "pressure-agent, with the kubelet behind it"
		res.Runs = append(res.Runs, ar)
		res.AgentThresholds = levels
	}
	res.Recorded = recorded(w)
	if len(res.Recorded) > 0 {
		for t := start; !t.After(end); t = t.Add(o.Timing.Step) {
			res.world = append(res.world, sampleOf(observations(w.Memory(t), t), t))
		}
	}
	res.Differences = differences(res)
	return res
}

func simulateRun(w World, o Options, name string) (RunResult, []ThresholdLine) {
	start, end := w.Span()
	// Defensive floors (callers validate with Timing.Validate): no interval shorter than a step.
	o.Timing.Step = max(o.Timing.Step, 10*time.Millisecond)
	o.Timing.Housekeeping = max(o.Timing.Housekeeping, o.Timing.Step)
	o.Timing.CleanupPoll = max(o.Timing.CleanupPoll, o.Timing.Step)
	o.AgentTiming.SyncPeriod = max(o.AgentTiming.SyncPeriod, o.Timing.Step)
	if o.Timing.NodeStatusUpdate > 0 {
		o.Timing.NodeStatusUpdate = max(o.Timing.NodeStatusUpdate, o.Timing.Step)
	}
	if v, ok := w.(agentViewer); ok && name == RunAgent {
		if aw := v.AgentView(); aw != nil {
			w = aw // pressure-agent reads the cgroups itself: the recording's local samples
		}
	}
	r := &run{name: name, world: w, node: newNode(w), timing: o.Timing, start: start, below: map[string]bool{}, releases: o.RecordedReleases,
		kubelet: &kubelet{cfg: o.Kubelet, disableLocal: o.DisableLocalStorageCapacityIsolation, timing: o.Timing,
			sem: o.KubeletSemantics}}
	r.q.push(start, evTick)
	r.q.push(start.Add(o.Timing.FirstSync), evKubeletSync)
	if o.Timing.NodeStatusUpdate > 0 {
		r.q.push(start.Add(o.Timing.NodeStatusUpdate), evStatus)
	}
	if name == RunAgent {
		r.agent = &agent{a: o.NewAgent(), timing: o.AgentTiming, taintKey: o.AgentTaintKey,
			below: map[signal.Signal]bool{}, lastSeen: map[signal.Signal]int64{}}
		if o.Timing.AgentPhase > 0 { // the first poll at the phase too (agent.wake)
			r.agent.lastPoll = start.Add(o.Timing.AgentPhase - max(o.AgentTiming.PollInterval, o.Timing.Step))
		}
		r.q.push(start.Add(o.Timing.AgentPhase), evAgentSync)
	}
	for r.q.Len() > 0 {
		e := r.q.pop()
		if e.at.After(end) {
			break
		}
		r.handle(e)
	}
	r.order = 0
	sort.SliceStable(r.events, func(i, j int) bool { return r.events[i].At.Before(r.events[j].At) }) // a ladder's wait ends later
	for _, e := range r.events {
		if e.Kind == KindEvict && e.Eviction != nil {
			r.order++
			e.Eviction.Order = r.order
		}
	}
	var levels []ThresholdLine
	if r.agent != nil {
		for _, sig := range []signal.Signal{signal.MemoryAvailable, signal.AllocatableMemoryAvailable} {
			if v, ok := r.agent.levels[sig]; ok {
				levels = append(levels, ThresholdLine{Actor: ActorAgent, Signal: string(sig), Threshold: formatMi(v), Bytes: v})
			}
		}
	}
	return RunResult{Name: name, Events: r.events, Summary: r.summary(o), samples: r.samples}, levels
}

func (r *run) handle(e event) {
	t, k := e.at, r.kubelet
	switch e.kind {
	case evTick:
		r.tick(t)
		r.q.push(t.Add(r.timing.Step), evTick)
	case evKubeletSync:
		if ev := k.sync(r, t, ""); len(ev) > 0 {
			// waitForPodsCleanup starts when the sync returns, after the kill (a kill it joined: when
			// that one is done).
			k.waiting, k.waitStart = ev, t
			for _, uid := range ev {
				if kl, ok := r.node.killed[uid]; ok && kl.released.After(k.waitStart) {
					k.waitStart = kl.released
				}
			}
			r.q.push(k.waitStart.Add(r.timing.CleanupPoll), evKubeletPoll)
		} else {
			r.q.push(t.Add(r.timing.Housekeeping+r.timing.SyncDuration), evKubeletSync)
		}
	case evKubeletPoll:
		if k.cleaned(r.node, t) || t.Sub(k.waitStart) >= r.timing.CleanupTimeout {
			r.q.push(t.Add(r.timing.SyncDuration), evKubeletSync)
		} else {
			r.q.push(t.Add(r.timing.CleanupPoll), evKubeletPoll)
		}
	case evKubeletNotify:
		k.notified(r, t)
	case evAgentSync:
		if t.Before(r.agent.busyUntil) {
			r.q.push(r.agent.busyUntil, evAgentSync) // the shell still carries out the last plan
			return
		}
		r.agent.sync(r, t, "")
		r.q.push(t.Add(r.agent.timing.SyncPeriod), evAgentSync)
	case evAgentWake:
		if t.Before(r.agent.busyUntil) {
			if !r.q.has(evAgentWake, r.agent.busyUntil) {
				r.q.push(r.agent.busyUntil, evAgentWake) // a wake while acting: the sync after it
			}
			return
		}
		r.agent.sync(r, t, "poll: "+r.wakeWhy)
	case evStatus:
		k.writeStatus(r, t)
		r.q.push(t.Add(r.timing.NodeStatusUpdate), evStatus)
	}
}

// tick samples the run's node: crossings of the thresholds, the kubelet's notifiers, the agent's
// poll and the plot.
func (r *run) tick(t time.Time) {
	r.admit(t)
	obs := observations(r.node.memory(t), t)
	r.samples = append(r.samples, sampleOf(obs, t))
	r.crossings(t, obs)
	if r.kubelet.crossed(obs, t) && !r.q.hasAt(evKubeletNotify, t) {
		r.q.push(t, evKubeletNotify)
	}
	if r.agent != nil {
		if why, ok := r.agent.wake(obs, t); ok {
			r.wakeWhy = why
			r.q.push(t, evAgentWake)
		}
	}
}

// sampleOf keeps the memory signals of a tick.
func sampleOf(obs map[signal.Signal]signal.Observation, t time.Time) sample {
	s := sample{at: t}
	if o, ok := obs[signal.MemoryAvailable]; ok {
		s.node = o.Available
	}
	if o, ok := obs[signal.AllocatableMemoryAvailable]; ok {
		s.pod, s.hasPods = o.Available, true
	}
	return s
}

// crossings records when a memory signal goes below one of the kubelet's (or the agent's) hard
// thresholds and back.
func (r *run) crossings(t time.Time, obs map[signal.Signal]signal.Observation) {
	type line struct {
		who   Actor
		sig   signal.Signal
		level int64
	}
	var lines []line
	for _, th := range r.kubelet.cfg.Thresholds {
		if o, ok := obs[th.Signal]; ok && th.Signal.IsMemory() && !th.Inert() && th.IsHard() {
			lines = append(lines, line{ActorKubelet, th.Signal, th.Value.Resolve(o.Capacity)})
		}
	}
	if r.agent != nil {
		for _, sig := range []signal.Signal{signal.MemoryAvailable, signal.AllocatableMemoryAvailable} {
			if level, ok := r.agent.levels[sig]; ok {
				lines = append(lines, line{ActorAgent, sig, level})
			}
		}
	}
	for _, l := range lines {
		key := fmt.Sprintf("%s %s %d", l.who, l.sig, l.level)
		below := obs[l.sig].Available < l.level
		if below == r.below[key] {
			continue
		}
		r.below[key] = below
		what := "back above"
		if below {
			what = "below"
		}
		r.add(Event{At: t, Actor: ActorWorld, Kind: KindCrossing, Subject: string(l.sig),
			Detail: fmt.Sprintf("%s %s the %s threshold %s", formatMi(obs[l.sig].Available), what, l.who, formatMi(l.level))})
	}
}

// add appends an event of the run.
func (r *run) add(e Event) {
	e.Run, e.Offset = r.name, Duration(e.At.Sub(r.start))
	if e.Kind == KindEvict && e.Eviction != nil {
		r.order++
		e.Eviction.Order = r.order
	}
	r.events = append(r.events, e)
}

// evictionInfo describes a kubelet eviction for the timeline.
func (r *run) evictionInfo(ev decision.Eviction, d decision.Decision, in decision.Input, t time.Time) *Eviction {
	info := &Eviction{Pod: ev.Namespace + "/" + ev.Name, UID: ev.UID, Signal: string(ev.Signal), Message: ev.Message,
		DecidedBy: string(ev.DecidedBy), GraceSeconds: ev.Grace.Override}
	if ev.Path == decision.PathLocalStorage {
		info.Signal = ev.MetricLabel
	}
	if o, ok := in.Snapshot.Observations[ev.Signal]; ok && ev.Threshold >= 0 {
		info.Available = formatMi(o.Available)
		info.Threshold = thresholdText(in.Config.Thresholds[ev.Threshold], o)
	}
	if d.Ranking != nil {
		info.Ranked = len(d.Ranking.Entries)
		for i, e := range d.Ranking.Entries {
			if e.Candidate.UID == ev.UID {
				info.Rank = i + 1
			}
		}
	}
	for _, c := range in.Candidates {
		if c.UID == ev.UID && c.Stats != nil {
			info.StatsAge = Duration(t.Sub(c.Stats.Time))
			info.Usage = formatMi(workingSet(*c.Stats))
		}
	}
	if k, ok := r.node.killed[ev.UID]; ok && k.by == ActorAgent {
		info.Terminating = true
	}
	return info
}

// thresholdText is the threshold an eviction acted on, with its minimum reclaim when only that keeps
// it met (a threshold acted on before).
func thresholdText(th threshold.Threshold, o signal.Observation) string {
	text := threshold.FormatThreshold(th.Value, o.Capacity)
	if th.MinReclaim != nil && o.Available >= th.Value.Resolve(o.Capacity) {
		q := threshold.MetQuantity(th, o.Capacity, true)
		text = fmt.Sprintf("%s (%s + minimum reclaim %s)", q.String(), text, th.MinReclaim.String())
	}
	return text
}

// evictDetail is the one-line detail of an evict event.
func evictDetail(e *Eviction, trigger string) string {
	parts := []string{}
	if e.Available != "" {
		parts = append(parts, fmt.Sprintf("%s %s < %s", e.Signal, e.Available, e.Threshold))
	} else {
		parts = append(parts, e.Signal)
	}
	if e.Rank > 0 {
		p := fmt.Sprintf("rank %d of %d", e.Rank, e.Ranked)
		if e.DecidedBy != "" {
			p += " (" + e.DecidedBy + ")"
		}
		parts = append(parts, p)
	}
	if e.Usage != "" {
		parts = append(parts, fmt.Sprintf("usage %s in stats %s old", e.Usage, time.Duration(e.StatsAge).Round(100*time.Millisecond)))
	} else {
		parts = append(parts, "no stats")
	}
	if e.Terminating {
		parts = append(parts, "already terminating")
	}
	if trigger != "" {
		parts = append(parts, trigger)
	}
	return joinNonEmpty("; ", parts...)
}

// describeKubelet says in one line how the kubelet is modelled.
func describeKubelet(o Options) string {
	var ths []string
	for _, th := range o.Kubelet.Thresholds {
		if s := th.String(); th.Signal.IsMemory() && !th.Inert() && (len(ths) == 0 || ths[len(ths)-1] != s) {
			ths = append(ths, s)
		}
	}
	notifier := "off"
	if o.Kubelet.KernelMemcgNotification {
		notifier = "on"
	}
	t := o.Timing
	return fmt.Sprintf("%s; transition period %s; memcg notifier %s; housekeeping every %s from %s, cleanup wait %s-%s, "+
		"kill %s, node status every %s", joinNonEmpty(", ", ths...), o.Kubelet.PressureTransitionPeriod, notifier,
		t.Housekeeping+t.SyncDuration, FormatOffset(t.FirstSync), t.CleanupPoll, t.CleanupTimeout, t.PodKill, t.NodeStatusUpdate)
}
