package agent

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// An agent that starts while the API server is down has no pod list, so it would decide on no pods at
// all and do nothing, even with the cgroup-kill rung on. Until the pod cache has synced, it takes the
// pods from the node's cgroup tree instead: "unlisted" pods, known by UID, QoS class (the cgroup's
// directory) and usage, with no name, priority or requests. They can only be killed on the node, never
// evicted (the Eviction API needs a name and is down anyway), so they are candidates only when the
// cgroup kill is allowed, under a hard threshold, like the ladder's own kill rung. Guaranteed pods and
// pods the kubelet protects from the kernel's OOM killer (a process with oom_score_adj -997: Guaranteed
// or node-critical, e.g. a static control-plane pod) are never unlisted candidates: without the API the
// agent cannot tell a critical pod from another, and the kernel's view is the one it has.

// UnlistedPod is a pod found in the cgroup tree.
type UnlistedPod struct {
	UID string
	QOS corev1.PodQOSClass
}

// unlistedLister lists the pods of the cgroup tree that may be unlisted candidates
// (policy.UnlistedCandidate: BestEffort and Burstable pods whose processes the kubelet does not protect).
func unlistedLister(l cgroupfs.Layout, proc *procfs.Reader) func() ([]UnlistedPod, error) {
	return func() ([]UnlistedPod, error) {
		cgs, err := l.PodCgroups()
		var out []UnlistedPod
		var errs []error
		for _, cg := range cgs {
			if !policy.UnlistedCandidate(cg.QOS, nil) {
				continue // its QoS class rules it out: its processes are not read
			}
			pids, perr := l.PIDs(cg.Rel)
			if perr != nil {
				errs = append(errs, perr)
				continue
			}
			if !policy.UnlistedCandidate(cg.QOS, oomScoreAdjs(proc, pids)) {
				continue
			}
			qos := corev1.PodQOSBurstable
			if cg.QOS == "besteffort" {
				qos = corev1.PodQOSBestEffort
			}
			out = append(out, UnlistedPod{UID: cg.UID, QOS: qos})
		}
		return out, errors.Join(append(errs, err)...)
	}
}

// oomScoreAdjs reads the oom_score_adj of pids; a process that exited meanwhile is skipped.
func oomScoreAdjs(proc *procfs.Reader, pids []int) []int {
	var out []int
	for _, pid := range pids {
		if adj, err := proc.OOMScoreAdj(pid); err == nil {
			out = append(out, adj)
		}
	}
	return out
}

// unlistedPods returns, while the pod list is incomplete and the kill is possible, the unlisted pods
// that are not listed, as API pods carrying only UID and QoS class.
func (a *Agent) unlistedPods(listed []*corev1.Pod, complete bool) []*corev1.Pod {
	if a.Unlisted == nil || a.Killer == nil || complete {
		return nil
	}
	found, err := a.Unlisted()
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageRead).Inc()
		a.Log.Warn("unlisted pods", "err", err)
	}
	have := make(map[types.UID]bool, len(listed))
	for _, p := range listed {
		have[p.UID] = true
	}
	var out []*corev1.Pod
	for _, u := range found {
		if have[types.UID(u.UID)] {
			continue
		}
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{UID: types.UID(u.UID), Name: "unlisted-pod-" + u.UID},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: u.QOS},
		})
	}
	return out
}

// killUnlisted carries out a planned eviction of an unlisted pod: the cgroup kill when the policy says so
// (policy.KillUnlisted: a hard threshold), nothing otherwise.
func (a *Agent) killUnlisted(ev policy.Eviction) action {
	act := action{Pod: "(unlisted) pod " + ev.UID, UID: ev.UID}
	if !policy.KillUnlisted(ev) {
		a.outcome(ev.UID, policy.ActionEvict, policy.ResultNotAttempted, policy.ContactNone)
		return act
	}
	n, err := a.Killer.KillPod(types.UID(ev.UID))
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageKill).Inc()
		a.Log.Warn("cgroup kill of an unlisted pod", "uid", ev.UID, "err", err)
		a.outcome(ev.UID, policy.ActionEvict, policy.ResultFailed, policy.ContactNone)
		act.Result = actuate.Result{Outcome: actuate.OutcomeFailed, Rung: actuate.RungCgroupKill}
		return act
	}
	a.outcome(ev.UID, policy.ActionEvict, policy.ResultKilled, policy.ContactNone)
	a.Metrics.evictions.WithLabelValues(string(ev.Signal), string(actuate.RungCgroupKill), string(actuate.OutcomeKilled)).Inc()
	a.Log.Warn("killed an unlisted pod on the node: no pod list from the API server yet", "uid", ev.UID,
		"signal", ev.Signal, "observed", ev.ObservedText, "threshold", ev.ThresholdText, "rank", ev.Rank, "processes", n)
	act.Result, act.Killed = actuate.Result{Outcome: actuate.OutcomeKilled, Rung: actuate.RungCgroupKill, Killed: n}, true
	return act
}
