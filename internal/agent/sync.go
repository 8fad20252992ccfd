package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
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
	Plan     policy.Plan
	Actions  []action
	Pressure bool
}

// sync is the one decision path: read, policy.Step, carry out the plan, feed the outcomes into the next
// step, report.
func (a *Agent) sync(ctx context.Context, trigger string) syncResult {
	a.init()
	now := a.Clock.Now()
	res := syncResult{Trigger: trigger, At: now}
	a.deciding(true)
	defer func() {
		a.deciding(false) // already told, unless the sync panicked before its decision
		a.Metrics.syncs.WithLabelValues(trigger).Observe(a.Clock.Since(now).Seconds())
		a.Metrics.lastSyncTS.Set(float64(a.Clock.Now().Unix()))
		if a.Synced != nil {
			a.Synced(res)
		}
	}()
	cpu, gcs := processCPU(), gcCycles()
	snap := a.read(now, trigger)
	a.st.times = syncTimes{started: now, read: a.Clock.Now(), cpuStarted: cpu, cpuRead: processCPU(), gcsStarted: gcs}
	// Whether the list is complete is asked once, before the list is taken: an informer that syncs
	// between the two would make an earlier, partial list look complete, and the loop breaker would
	// settle the ledger's evictions of every pod missing from it (a restarted agent then evicted a pod
	// its predecessor had killed).
	complete := a.podsSynced()
	pods := a.listPods()
	unlisted := a.unlistedPods(pods, complete)
	a.st.unlisted = make(map[string]bool, len(unlisted))
	for _, p := range unlisted {
		a.st.unlisted[string(p.UID)] = true
	}
	a.loadPendingLedger(ctx, complete)
	in, byUID := a.input(now, snap, append(unlisted, pods...))
	next, plan := policy.Step(a.st.policy, in)
	a.deciding(false)
	a.st.times.decided = a.Clock.Now()
	a.st.times.cpuDecided, a.st.times.gcsDecided = processCPU(), gcCycles()
	a.st.policy, a.st.outcomes, a.st.reclaims = next, nil, nil
	res.Plan, res.Observed, res.Pressure = plan, plan.Observed, len(plan.Pressure) > 0
	if plan.Observed {
		a.st.watch = plan.Watch
	}
	a.report(now, plan, snap)
	if !plan.Observed {
		return res
	}
	// The eviction request is the first API call after a decision: the taint (and the ledger's
	// settling) go out at the same moment, not before it. The taint's PATCH lands long before a
	// controller's replacement of an evicted pod reaches the scheduler (it must first see the eviction),
	// and eviction loops are broken per workload by the avoidance the ladder publishes before each
	// eviction. Until the pod list is complete the loop breaker waits: it would settle every ledger
	// entry of a pod it does not see.
	breaking := make(chan struct{})
	go func() {
		defer close(breaking)
		if complete {
			a.breaker(ctx, now, plan, pods)
		}
	}()
	a.st.reclaims = a.reclaim(ctx, plan) // before any eviction of the plan
	res.Actions = a.act(ctx, plan, byUID)
	<-breaking
	if a.Rearm != nil {
		a.Rearm(plan.Watch)
	}
	return res
}

// read takes the node snapshot: the node's signals, and the pods' stats when a decision could use them
// (a notifier's wake-up, the first sync, or policy.State.PodStatsDue), else the last ones read. A partial
// snapshot is used; one without any observation is not (like the kubelet when its summary fails, nothing
// is decided).
//
// Fresh pod stats are read before the node signals they are credited against (source.ReadPodsFirst): a pod
// that frees its memory between the two reads then shows in both, not in neither.
func (a *Agent) read(now time.Time, trigger string) signal.Snapshot {
	var snap signal.Snapshot
	var err error
	why := "wake-up"
	if trigger == TriggerPeriodic {
		snap, err = a.Source.ReadNode(now)
		why = a.st.policy.PodStatsDue(now, snap, a.Settings.Config, a.st.watch, a.st.podsAt, a.Settings.PodStatsMaxAge)
	}
	if why == "" {
		a.Metrics.podStatsReads.WithLabelValues("reused").Inc()
		snap.Pods = make(map[string]signal.PodStats, len(a.st.pods))
		for uid, p := range a.st.pods {
			snap.Pods[uid] = p
		}
	} else {
		a.Metrics.podStatsReads.WithLabelValues(why).Inc()
		// A periodic sync read the node only to ask PodStatsDue; it reads it again after the pods.
		snap, err = source.ReadPodsFirst(a.Source, now)
		a.st.pods, a.st.podsAt = snap.Pods, now
	}
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageRead).Inc()
		a.Log.Warn("read node", "err", err)
	}
	return snap
}

func (a *Agent) listPods() []*corev1.Pod {
	pods, err := a.Pods.List()
	if err != nil {
		a.Metrics.errors.WithLabelValues(stagePods).Inc()
		a.Log.Warn("list pods", "err", err)
	}
	return pods
}

// input builds the policy's input with policy.NewInput, the builder explain and the simulator use too,
// from what this sync read: every listed pod with its stats (NewInput keeps the active ones and the
// terminal ones still being deleted), the ledger's evictions, the reclaim estimate, and the outcomes of
// the last plan. It returns the active API pods by UID for carrying the plan out.
func (a *Agent) input(now time.Time, snap signal.Snapshot, pods []*corev1.Pod) (policy.Input, map[string]*corev1.Pod) {
	r := policy.Read{Now: now, Config: a.Settings.Config, Kubelet: a.KubeletConfig, KubeletSemantics: a.kubeletSemantics(),
		Snapshot: snap, Outcomes: append(a.st.outcomes, a.later.take()...), Reclaims: a.st.reclaims, ReclaimUnavailable: a.reclaimUnavailable(),
		Reclaimable: a.reclaimable(now, snap, pods), Ledger: a.ledgerRead()}
	byUID := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		r.Pods = append(r.Pods, kubeconv.PolicyPod(p, snap.Pods))
		if !kubeconv.Terminal(p) {
			byUID[string(p.UID)] = p
		}
	}
	in, _ := policy.NewInput(r)
	return in, byUID
}

// ledgerRead is the ledger's evictions for policy.NewInput (nil without a ledger).
func (a *Agent) ledgerRead() *policy.Ledger {
	if a.Ledger == nil {
		return nil
	}
	return policy.LedgerOf(a.Ledger.Entries())
}

// deciding tells Agent.Deciding, when set, whether a sync is between its start and its decision.
func (a *Agent) deciding(b bool) {
	if a.Deciding != nil {
		a.Deciding(b)
	}
}

// podsSynced reports whether the pod list is complete.
func (a *Agent) podsSynced() bool { return a.PodsSynced == nil || a.PodsSynced() }

func podKey(ns, name string) string { return fmt.Sprintf("%s/%s", ns, name) }

// Node image listing: how often, and how old a listing may be and still be used.
const (
	nodeImagesEvery  = 30 * time.Second
	nodeImagesMaxAge = 2 * time.Minute
)

// nodeImages reports the node's images (status.images) as last read, and when.
type nodeImages interface {
	Latest() ([]corev1.ContainerImage, time.Time, bool)
}

// nodeImageCache reads the Node's status.images every nodeImagesEvery in the background (nodes get:
// the agent's RBAC has no list or watch on nodes), so a sync never waits for the API.
type nodeImageCache struct {
	client kubernetes.Interface
	node   string
	clock  clock.Clock
	onErr  func(error)

	mu      sync.Mutex
	images  []corev1.ContainerImage
	at      time.Time
	version string // status.nodeInfo.kubeletVersion as last read
}

// KubeletVersion is the node's status.nodeInfo.kubeletVersion as last read ("" before the first read).
func (c *nodeImageCache) KubeletVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// run refreshes the cache until ctx is done.
func (c *nodeImageCache) run(ctx context.Context) {
	for {
		n, err := c.client.CoreV1().Nodes().Get(ctx, c.node, metav1.GetOptions{})
		switch {
		case err != nil && ctx.Err() == nil && c.onErr != nil:
			c.onErr(err)
		case err == nil:
			c.mu.Lock()
			c.images, c.at, c.version = n.Status.Images, c.clock.Now(), n.Status.NodeInfo.KubeletVersion
			c.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(nodeImagesEvery):
		}
	}
}

// Latest implements nodeImages.
func (c *nodeImageCache) Latest() ([]corev1.ContainerImage, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.images, c.at, !c.at.IsZero()
}

// reclaimable estimates what the kubelet's node-level reclaim could free: the node's images no active
// pod uses (image GC) and the measured logs of its terminated pods (container GC). Nil (unknown) without
// a listing of the node's images younger than nodeImagesMaxAge.
func (a *Agent) reclaimable(now time.Time, snap signal.Snapshot, pods []*corev1.Pod) *policy.Reclaimable {
	if a.Images == nil {
		return nil
	}
	images, at, ok := a.Images.Latest()
	if !ok || now.Sub(at) > nodeImagesMaxAge {
		return nil
	}
	r := &policy.Reclaimable{UnusedImages: kubeconv.UnusedImageBytes(images, pods),
		Source:            "the node's status.images of " + at.UTC().Format(time.RFC3339) + " and the terminated pods' logs",
		DeadContainerLogs: kubeconv.DeadContainerLogBytes(pods, snap)}
	return r
}
