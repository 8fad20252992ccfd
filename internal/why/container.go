package why

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/threshold"
)

// lastTermination is the most recent terminated state of any container.
type lastTermination struct {
	Container Container
	T         Termination
	Current   bool
}

func latestTermination(p *Pod) (lastTermination, bool) {
	if p == nil {
		return lastTermination{}, false
	}
	var all []lastTermination
	for _, c := range p.Containers {
		if c.Terminated != nil {
			all = append(all, lastTermination{Container: c, T: *c.Terminated, Current: true})
		}
		if c.LastTerminated != nil {
			all = append(all, lastTermination{Container: c, T: *c.LastTerminated})
		}
	}
	if len(all) == 0 {
		return lastTermination{}, false
	}
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].T.FinishedAt.Equal(all[j].T.FinishedAt) {
			return all[i].T.FinishedAt.After(all[j].T.FinishedAt)
		}
		return all[i].Container.Name < all[j].Container.Name
	})
	return all[0], true
}

func terminationText(lt lastTermination) string {
	state := "lastState"
	if lt.Current {
		state = "state"
	}
	return fmt.Sprintf("container %s %s.terminated: reason %s, exit code %d, finished %s, restarts %d",
		lt.Container.Name, state, orDash(lt.T.Reason), lt.T.ExitCode, stamp(lt.T.FinishedAt), lt.Container.RestartCount)
}

// containerDeath explains the most recent container termination of a pod that still exists.
func containerDeath(v *Verdict, ev Evidence) bool {
	p := ev.Pod
	if p == nil {
		return false
	}
	lt, ok := latestTermination(p)
	if !ok || (p.DeletionTimestamp != nil && lt.T.Reason != "OOMKilled") {
		return false
	}
	v.add("pod status", terminationText(lt))
	switch {
	case lt.T.Reason == "OOMKilled":
		oomKilled(v, ev, lt)
	case liveness(v, ev, lt):
	case systemOOM(v, ev, lt.T.FinishedAt):
		v.set(CauseOOMKernel, Medium, fmt.Sprintf("container %s was SIGKILLed (exit %d) while the kernel OOM killer acted for the whole node",
			lt.Container.Name, lt.T.ExitCode), lt.T.FinishedAt)
	case lt.T.ExitCode == 137:
		v.set(CauseUnknown, Low, fmt.Sprintf("container %s was killed by SIGKILL (exit 137), but no Event names who sent it: "+
			"not the OOM killer of its own limit (reason is not OOMKilled), no SystemOOM on the node, no failed probe", lt.Container.Name), lt.T.FinishedAt)
	default:
		v.set(CauseExitedOnItsOwn, Medium, fmt.Sprintf("container %s exited on its own with code %d (%s): no kill by the kubelet, the kernel or the API is recorded",
			lt.Container.Name, lt.T.ExitCode, orDash(lt.T.Reason)), lt.T.FinishedAt)
	}
	return true
}

func oomKilled(v *Verdict, ev Evidence, lt lastTermination) {
	c := lt.Container
	neighbours := neighbourOOMs(ev, lt.T.FinishedAt)
	if len(neighbours) > 0 {
		v.note(fmt.Sprintf("also OOMKilled within 5s on the node: %s. On cgroup v1 an OOM event of a parent cgroup (kubepods, a QoS class) "+
			"reaches every container under it and the runtime marks each one that exits as OOMKilled: the kernel's one victim may have been "+
			"another pod, this one a bystander", strings.Join(neighbours, ", ")))
	}
	if c.MemoryLimit > 0 {
		v.add("pod spec", fmt.Sprintf("container %s memory limit %s, request %s", c.Name, bytes(c.MemoryLimit), bytes(c.MemoryRequest)))
		conf := High
		if systemOOM(v, ev, lt.T.FinishedAt) || len(neighbours) > 0 {
			conf = Medium
		}
		v.set(CauseOOMOwnLimit, conf, fmt.Sprintf("container %s was OOM-killed by the kernel when its memory reached its own limit %s",
			c.Name, bytes(c.MemoryLimit)), lt.T.FinishedAt)
		v.note("the API does not record a container's usage at the kill; the kernel kills in the container's cgroup when usage reaches the limit")
		if len(ev.Pod.Containers) > 1 {
			v.note("the pod has several containers: the pod cgroup's limit (the sum of the limits) can trigger it too")
		}
		return
	}
	v.add("pod spec", fmt.Sprintf("container %s has no memory limit (request %s): its own cgroup cannot OOM", c.Name, bytes(c.MemoryRequest)))
	if systemOOM(v, ev, lt.T.FinishedAt) {
		v.set(CauseOOMKernel, High, fmt.Sprintf("container %s was killed by the kernel OOM killer for the whole node (SystemOOM)", c.Name), lt.T.FinishedAt)
		return
	}
	limit := "the pods cgroup limit"
	if a := allocatableFor(ev, "memory"); a != nil {
		limit = fmt.Sprintf("the pods cgroup limit %s (capacity %s − kube-reserved %s − system-reserved %s)",
			a.PodsCgroupLimit, a.Capacity, a.KubeReserved, a.SystemReserved)
	}
	v.add("Events on node "+v.Node, fmt.Sprintf("no SystemOOM within %s of %s: not a whole-node OOM", oomWindow, stamp(lt.T.FinishedAt)))
	tail := "before the kubelet evicted (it acts on stats polled every 10s, or on the memcg notifier)"
	if ev.Node != nil && ev.Node.Config != nil && !memoryThreshold(ev.Node.Config.Thresholds) {
		tail = "and the kubelet has no memory eviction threshold that could have acted first"
	}
	v.set(CauseOOMKernel, Medium, fmt.Sprintf("container %s was killed by the kernel OOM killer for the pods cgroup (kubepods) or its QoS cgroup: "+
		"the pods together reached %s %s", c.Name, limit, tail), lt.T.FinishedAt)
}

func memoryThreshold(ts []threshold.Threshold) bool {
	for _, t := range ts {
		if t.Signal.IsMemory() {
			return true
		}
	}
	return false
}

// systemOOM adds the kubelet's SystemOOM node Events near at and reports whether there were any.
func systemOOM(v *Verdict, ev Evidence, at time.Time) bool {
	evs := find(ev.NodeEvents, func(e Event) bool { return e.Reason == ReasonSystemOOM && near(e, at, oomWindow) })
	for _, e := range evs {
		v.add(eventSource(e), e.Message+" (the kernel's victim process and pid)")
	}
	return len(evs) > 0
}

func neighbourOOMs(ev Evidence, at time.Time) []string {
	var out []string
	for _, p := range ev.NodePods {
		for _, c := range p.Containers {
			for _, t := range []*Termination{c.Terminated, c.LastTerminated} {
				if t != nil && t.Reason == "OOMKilled" && absDur(t.FinishedAt.Sub(at)) <= 5*time.Second {
					out = append(out, p.Namespace+"/"+p.Name+"/"+c.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// liveness reports a kill by the kubelet after failed liveness (or startup) probes of the container.
func liveness(v *Verdict, ev Evidence, lt lastTermination) bool {
	name := lt.Container.Name
	kills := find(ev.Events, func(e Event) bool {
		return e.Reason == ReasonKilling && strings.Contains(e.Message, "Container "+name+" failed") &&
			strings.Contains(e.Message, "probe")
	})
	if len(kills) == 0 {
		return false
	}
	v.add(eventSource(kills[0]), fmt.Sprintf("%s (count %d)", kills[0].Message, kills[0].Count))
	for _, e := range find(ev.Events, func(e Event) bool { return e.Reason == ReasonUnhealthy }) {
		v.add(eventSource(e), fmt.Sprintf("%s (count %d)", e.Message, e.Count))
		break
	}
	v.set(CauseLivenessProbe, High, fmt.Sprintf("container %s was killed and restarted by the kubelet after its liveness probe failed", name), lt.T.FinishedAt)
	return true
}

// deleted explains a pod that is being deleted or is gone without an eviction record.
func deleted(v *Verdict, ev Evidence) bool {
	p := ev.Pod
	ctrl := find(ev.OwnerEvents, func(e Event) bool {
		return e.Reason == ReasonCtrlDelete && strings.HasSuffix(e.Message, "pod: "+v.Pod)
	})
	stops := find(ev.Events, func(e Event) bool {
		return e.Reason == ReasonKilling && strings.HasPrefix(e.Message, "Stopping container")
	})
	dt, hasDT := condition(p, "DisruptionTarget")
	var at time.Time
	switch {
	case p != nil && p.DeletionTimestamp != nil:
		v.add("pod metadata", "deletionTimestamp "+stamp(*p.DeletionTimestamp))
		at = *p.DeletionTimestamp
	case p == nil && (len(ctrl) > 0 || len(stops) > 0 || ev.Janitor != nil):
	default:
		return false
	}
	if hasDT {
		v.add("pod condition DisruptionTarget", fmt.Sprintf("reason %s at %s: %s", dt.Reason, stamp(dt.At), dt.Message))
	}
	for _, e := range append(ctrl, stops...) {
		v.add(eventSource(e), e.Message)
		if at.IsZero() {
			at = e.Last
		}
	}
	switch {
	case len(ctrl) > 0:
		v.set(CauseDeleted, High, "deleted by its controller ("+ctrl[0].Source+"), e.g. a scale-down or rollout", at)
	case hasDT && dt.Reason == "DeletionByTaintManager":
		v.set(CauseDeleted, High, "deleted by the taint eviction controller (a NoExecute taint it does not tolerate)", at)
	case hasDT && dt.Reason == "DeletionByPodGC":
		v.set(CauseDeleted, High, "deleted by the pod garbage collector (orphaned or terminated pods)", at)
	case ev.Janitor != nil && ev.Janitor.Verified:
		j := ev.Janitor
		v.add("Event "+j.Event, fmt.Sprintf("pressure-janitor deleted it after it ended %s/%s at %s", j.Phase, orDash(j.Reason), stamp(j.EvictedAt)))
		v.set(CauseDeleted, High, "deleted by pressure-janitor after it had ended "+j.Phase, j.EvictedAt)
	case ev.Janitor != nil:
		j := ev.Janitor
		v.add(j.janitorLabel(""), fmt.Sprintf("claims pressure-janitor deleted it after it ended %s/%s at %s", j.Phase, orDash(j.Reason), stamp(j.EvictedAt)))
		v.set(CauseDeleted, Low, "an unverified Event claims pressure-janitor deleted it after it had ended "+j.Phase+
			" (not written as pressure-janitor: see the API server's audit log for who deleted it)", j.EvictedAt)
	default:
		v.set(CauseDeleted, Medium, "deleted through the API by a user or a controller: no controller Event claims it, "+
			"and the API keeps no record of who sent the DELETE (see the API server's audit log)", at)
	}
	return true
}
