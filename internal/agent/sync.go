package agent

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Sync triggers.
const (
	TriggerStart    = "start"
	TriggerPeriodic = "periodic"
	TriggerNotify   = "notify"
)

// syncResult is what one sync saw and did, for tests and readiness.
type syncResult struct {
	Trigger  string
	At       time.Time
	Observed bool // the node could be read
	Decision decision.Decision
	Victims  []victim
	Actions  []action
	Pressure bool
}

// sync is the one decision path: read, decide, act, report.
func (a *Agent) sync(ctx context.Context, trigger string) syncResult {
	a.init()
	now := a.Clock.Now()
	res := syncResult{Trigger: trigger, At: now}
	defer func() {
		a.Metrics.syncs.WithLabelValues(trigger).Observe(a.Clock.Since(now).Seconds())
		a.Metrics.lastSyncTS.Set(float64(a.Clock.Now().Unix()))
		if a.Synced != nil {
			a.Synced(res)
		}
	}()
	snap, ok := a.read(now)
	if !ok {
		return res
	}
	res.Observed = true
	pods := a.listPods()
	a.deriveContainerFs(snap)
	cfg, err := configFor(a.Settings.Policy, a.KubeletConfig, snap, a.Settings.Headroom)
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageDecided).Inc()
		a.Log.Error("decide", "err", err)
		return res
	}
	a.observeSignals(snap, cfg)
	res.Pressure = a.trackPressure(now, snap, cfg)
	in, active := a.input(now, snap, pods, cfg)
	prev := a.st.decision
	next, d := step(prev, in)
	a.st.decision = next
	res.Decision = d
	a.observeStatsAge(d)
	res.Victims = a.choose(prev, in, d)
	// The taint goes on before the evictions: a controller replaces an evicted pod within milliseconds
	// and the scheduler must already see the node tainted.
	a.breaker(ctx, now, res.Pressure, pods)
	res.Actions = a.act(ctx, now, cfg, snap, res.Victims, active)
	a.remember(snap)
	if a.Rearm != nil {
		a.Rearm(cfg, snap)
	}
	return res
}

// deriveContainerFs adds the containerfs thresholds for the observed filesystem layout, once, as the
// kubelet does on its first sync.
func (a *Agent) deriveContainerFs(snap signal.Snapshot) {
	if a.st.fsLayout {
		return
	}
	a.st.fsLayout = true
	l := snap.Filesystems
	ts, err := threshold.UpdateContainerFsThresholds(a.KubeletConfig.Thresholds, l.DedicatedImageFs, l.SplitContainerFs)
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageDecided).Inc()
		a.Log.Warn("containerfs thresholds", "err", err)
		return
	}
	a.KubeletConfig.Thresholds = ts
}

// read takes the node snapshot. A partial snapshot is used; one without any observation is not (like the
// kubelet when its summary fails, the state is left unchanged).
func (a *Agent) read(now time.Time) (signal.Snapshot, bool) {
	snap, err := a.Source.Snapshot(now)
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageRead).Inc()
		a.Log.Warn("read node", "err", err)
	}
	return snap, len(snap.Observations) > 0
}

func (a *Agent) listPods() []*corev1.Pod {
	pods, err := a.Pods.List()
	if err != nil {
		a.Metrics.errors.WithLabelValues(stagePods).Inc()
		a.Log.Warn("list pods", "err", err)
	}
	return pods
}

// step runs decision.Step; a disk step that asks for node-level reclaim is completed with "reclaim did
// nothing" (container and image garbage collection are the kubelet's; the agent cannot run them).
func step(prev decision.State, in decision.Input) (decision.State, decision.Decision) {
	next, d := decision.Step(prev, in)
	if d.NodeReclaim != nil && d.NodeReclaim.Pending {
		after := in.Snapshot
		in.AfterReclaim = &after
		next, d = decision.Step(prev, in)
	}
	return next, d
}

// activePod is an active pod with its candidate and whether its eviction is under way.
type activePod struct {
	Pod       *corev1.Pod
	Candidate rank.Candidate
	InFlight  bool
}

// input builds the decision input. Active pods are the pods not in a terminal phase (terminating pods
// included, as the kubelet's active pods). Under the pressure policy pods whose eviction is under way
// are not candidates and their memory counts as available again.
func (a *Agent) input(now time.Time, snap signal.Snapshot, pods []*corev1.Pod, cfg threshold.Config) (decision.Input, map[string]activePod) {
	a.forget(now, pods)
	active := map[string]activePod{}
	var all, free []rank.Candidate
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		c := kubeconv.Candidate(p, snap.Pods)
		ap := activePod{Pod: p, Candidate: c, InFlight: p.DeletionTimestamp != nil || a.requestedRecently(c.UID, now)}
		active[c.UID] = ap
		all = append(all, c)
		if !ap.InFlight {
			free = append(free, c)
		}
	}
	sortCandidates(all)
	sortCandidates(free)
	in := decision.Input{Now: now, Snapshot: snap, Candidates: all, Config: cfg, DisableLocalStorageCapacityIsolation: true}
	if a.Settings.Policy != PolicyKubelet {
		rel := released(all, func(uid string) bool { return active[uid].InFlight })
		in.Snapshot = withReleased(snap, rel)
		in.Candidates = free
	}
	return in, active
}

func (a *Agent) requestedRecently(uid string, now time.Time) bool {
	at, ok := a.st.requested[uid]
	return ok && now.Sub(at) < a.Settings.InFlightTTL
}

// forget drops requested evictions of pods no longer listed, and expired ones.
func (a *Agent) forget(now time.Time, pods []*corev1.Pod) {
	listed := make(map[string]bool, len(pods))
	for _, p := range pods {
		listed[string(p.UID)] = true
	}
	for uid, at := range a.st.requested {
		if !listed[uid] || now.Sub(at) >= a.Settings.InFlightTTL {
			delete(a.st.requested, uid)
		}
	}
	for uid, r := range a.st.refused {
		if !listed[uid] || now.Sub(r.at) >= pdbRetry {
			delete(a.st.refused, uid)
		}
	}
}

// choose returns the pods to evict this sync.
func (a *Agent) choose(prev decision.State, in decision.Input, d decision.Decision) []victim {
	if len(d.Evictions) == 0 {
		return nil
	}
	if a.Settings.Policy == PolicyKubelet {
		return kubeletVictims(d)
	}
	limit := min(a.Settings.MaxEvictionsPerSync, a.st.limiter.available(in.Now))
	t := target{Need: need(in.Config, d.Evictions[0].Threshold, in.Snapshot.Observations), Max: limit}
	if t.Need <= 0 {
		// Met only through minimum reclaim of a previously acted-on threshold: one pod, as the kubelet.
		t.Need = 1
	}
	return selectVictims(decision.PredictOrder(prev, in, decision.PredictOptions{IgnoreGrace: true}), t)
}

// kubeletVictims is the kubelet's one pod per sync, with its rank in the walk.
func kubeletVictims(d decision.Decision) []victim {
	ev := d.Evictions[0]
	v := victim{Eviction: ev}
	if d.Ranking != nil {
		for i, e := range d.Ranking.Entries {
			if e.Candidate.UID == ev.UID {
				v.Rank, v.Usage, v.Known = i+1, e.Values.Usage, e.Values.HasStats
			}
		}
	}
	return []victim{v}
}

// sortCandidates gives the core a stable input order: by namespace/name, then UID (the informer's order
// is a map's).
func sortCandidates(cs []rank.Candidate) {
	sort.Slice(cs, func(i, j int) bool { return candLess(cs[i], cs[j]) })
}

func candLess(a, b rank.Candidate) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

// remember keeps this sync's observations for the next one (trend and crossing estimates).
func (a *Agent) remember(snap signal.Snapshot) {
	for sig, o := range snap.Observations {
		a.st.lastObs[sig] = o
	}
}

func describeThreshold(cfg threshold.Config, id decision.ThresholdID, obs map[signal.Signal]signal.Observation) (string, string) {
	t := cfg.Thresholds[id]
	o := obs[t.Signal]
	return threshold.FormatAvailable(o.Available, t.Signal), threshold.FormatThreshold(t.Value, o.Capacity)
}

func podKey(ns, name string) string { return fmt.Sprintf("%s/%s", ns, name) }
