package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// LoadedRecording is a recording directory read back: the timeline for the simulator and the
// kubelet configuration of its first snapshot.
type LoadedRecording struct {
	Recording sim.Recording
	Kubelet   kubeconv.KubeletConfig
	// KubeletFile names the kubelet-config.json the configuration came from.
	KubeletFile string
	// KubeletVersion is the first snapshot's status.nodeInfo.kubeletVersion ("" when absent), read from
	// VersionFile.
	KubeletVersion, VersionFile string
	Warnings                    []string
}

// recordedPod accumulates what the snapshots say about one pod.
type recordedPod struct {
	rp      sim.RecordedPod
	seen    map[time.Time]bool // stats sample times already taken
	lastAt  time.Time          // the last snapshot listing the pod as active
	endSeen bool
}

// LoadRecording reads the snapshot directories of a recording (DIR/<UTC time>/, see record) in time
// order. Every error names the snapshot directory and file.
func LoadRecording(dir string) (*LoadedRecording, error) {
	stamps, err := recordingStamps(dir)
	if err != nil {
		return nil, err
	}
	out := &LoadedRecording{}
	pods := map[string]*recordedPod{}
	seen := map[signal.Signal]map[memoryKey]bool{signal.MemoryAvailable: {}, signal.AllocatableMemoryAvailable: {}}
	var firstConfig []byte
	agentEvicted := map[string]ledgerEviction{} // the pods pressure-agent's ledger names, in any snapshot, when and how
	ledgerWarned := false
	for i, st := range stamps {
		sub := filepath.Join(dir, st.name)
		snap, err := LoadSnapshotDir(os.DirFS(sub), sub)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out.Recording.Node, out.Kubelet, out.KubeletFile = snap.Node.Name, snap.KubeletConfig, snap.Origin[FileKubeletConfig]
			firstConfig = snap.Raw[FileKubeletConfig]
			out.KubeletVersion, out.VersionFile = snap.Node.Status.NodeInfo.KubeletVersion, snap.Origin[FileNode]
			out.Recording.Start = st.at
		} else if !bytes.Equal(bytes.TrimSpace(firstConfig), bytes.TrimSpace(snap.Raw[FileKubeletConfig])) && len(out.Warnings) == 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: the kubelet configuration differs from the first "+
				"snapshot's; the simulation uses the first (%s)", snap.Origin[FileKubeletConfig], out.KubeletFile))
		}
		if snap.Node.Name != out.Recording.Node {
			return nil, &FileError{File: snap.Origin[FileNode], Field: "metadata.name",
				Err: fmt.Errorf("node %q, but the recording is of node %q", snap.Node.Name, out.Recording.Node)}
		}
		addSnapshot(&out.Recording, pods, seen, snap, st.at)
		evs, problem := ledgerEvictions(&snap.Node)
		for uid, e := range evs {
			agentEvicted[uid] = e
		}
		if problem != "" && !ledgerWarned {
			out.Warnings, ledgerWarned = append(out.Warnings, snap.Origin[FileNode]+": "+problem+
				" (an Eviction API eviction of a pod no readable ledger names is taken as another client's)"), true
		}
		if snap.Cgroups != nil {
			out.Recording.Local = append(out.Recording.Local, localSamples(snap.Cgroups)...)
		}
		if snap.StatsTimes != nil {
			out.Recording.StatsTimes = append(out.Recording.StatsTimes, snap.StatsTimes.NodeMemory)
		}
		out.Recording.End = st.at
	}
	out.Recording.Snapshots = len(stamps)
	out.Recording.Local = distinctLocal(out.Recording.Local)
	out.Recording.StatsTimes = distinctTimes(out.Recording.StatsTimes)
	if cfg, err := threshold.ParseConfig(out.Kubelet.ThresholdInput()); err == nil && cfg.KernelMemcgNotification {
		out.Recording.Notified = cfg.Thresholds
	}
	out.Recording.Pods = finishPods(pods, out.Recording.End, agentEvicted)
	out.Recording.Decisions = decisions(out.Recording.Pods)
	return out, nil
}

type stamp struct {
	name string
	at   time.Time
}

// recordingStamps lists the snapshot directories of dir, ascending.
func recordingStamps(dir string) ([]stamp, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", dir, err)
	}
	var out []stamp
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		at, err := time.Parse(StampLayout, e.Name())
		if err != nil {
			continue // not a snapshot (the temporary directory of an interrupted write, or anything else)
		}
		out = append(out, stamp{name: e.Name(), at: at})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("recording %s: no snapshot directories (%s) in it: record one with kubectl pressure record",
			dir, StampLayout)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out, nil
}

// addSnapshot folds one snapshot into the recording: distinct memory samples, pods and their stats.
func addSnapshot(rec *sim.Recording, pods map[string]*recordedPod, seen map[signal.Signal]map[memoryKey]bool,
	snap *Snapshot, at time.Time) {
	s := kubeconv.Snapshot(&snap.Summary)
	addMemory(&rec.NodeMemory, s.Observations, signal.MemoryAvailable, seen)
	addMemory(&rec.PodsMemory, s.Observations, signal.AllocatableMemoryAvailable, seen)
	listed := map[string]bool{}
	for i := range snap.Pods.Items {
		p := &snap.Pods.Items[i]
		if p.Spec.NodeName != snap.Node.Name {
			continue
		}
		uid := string(p.UID)
		listed[uid] = true
		rp, ok := pods[uid]
		if !ok {
			since := at
			if ct := p.CreationTimestamp.Time; !ct.IsZero() && ct.Before(at) {
				since = ct
			}
			rp = &recordedPod{seen: map[time.Time]bool{}}
			rp.rp.Info = sim.PodInfo{Candidate: kubeconv.Candidate(p, nil), Since: since}
			pods[uid] = rp
		}
		rp.update(p, at, s.Pods)
	}
	// An ended pod that is gone from the API before a snapshot showed its containers stopped (an
	// Eviction API eviction deletes the pod) released its memory by this snapshot at the latest.
	for uid, rp := range pods {
		if !listed[uid] && rp.rp.Info.End != sim.EndNone && !rp.endSeen {
			rp.rp.Info.Released, rp.endSeen = minTime(rp.rp.Info.Released, at), true
		}
	}
}

// update records the pod's state in a snapshot taken at at.
func (rp *recordedPod) update(p *corev1.Pod, at time.Time, stats map[string]signal.PodStats) {
	info := &rp.rp.Info
	if ps, ok := stats[string(p.UID)]; ok && running(ps) && !ps.Time.IsZero() && !rp.seen[ps.Time] && info.End == sim.EndNone {
		rp.seen[ps.Time] = true
		rp.rp.Samples = append(rp.rp.Samples, sim.PodSample{Stats: ps, Seen: at})
	}
	if info.End != sim.EndNone {
		if !rp.endSeen && !running(stats[string(p.UID)]) {
			info.Released, rp.endSeen = minTime(info.Released, at), true
		}
		return
	}
	switch {
	case apiEvicted(p):
		// An Eviction API eviction: pressure-agent's when its ledger names the pod (finishPods decides);
		// its memory leaves when the kubelet has killed the pod, seen in a later snapshot.
		info.End, info.Ended, info.By = sim.EndEvicted, evictedAt(p, at), sim.ActorAgent
	case p.Status.Phase == corev1.PodFailed && p.Status.Reason == evictedReason:
		info.End, info.Ended, info.Message = sim.EndEvicted, evictedAt(p, at), p.Status.Message
		// The DisruptionTarget time is the start of the second of the kubelet's decision; its kill
		// (1 s grace) frees the memory within that second: the middle of it is the estimate.
		info.Released, rp.endSeen = info.Ended.Add(killTime), true
	case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
		info.End, info.Ended = sim.EndGone, at
	default:
		rp.lastAt = at
		return
	}
	if !rp.endSeen && !running(stats[string(p.UID)]) {
		info.Released, rp.endSeen = minTime(info.Released, at), true
	}
}

// apiEvicted reports whether the pod was evicted through the Eviction API: its DisruptionTarget
// condition's reason is EvictionByEvictionAPI (the API server sets it when it accepts the eviction).
func apiEvicted(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" {
			return true
		}
	}
	return false
}

// availableInMessage finds the available amount in the kubelet's eviction message ("... Threshold
// quantity: 200Mi, available: 203680Ki. ...").
var availableInMessage = regexp.MustCompile(`Threshold quantity: [^,]+, available: ([^ ]+)\. `)

// decisions returns what the recorded kubelet saw when it decided each eviction: the available amount
// of its message, just before the pod's memory is taken to be free.
func decisions(pods []sim.RecordedPod) []sim.MemorySample {
	var out []sim.MemorySample
	for _, p := range pods {
		m := availableInMessage.FindStringSubmatch(p.Info.Message)
		if p.Info.End != sim.EndEvicted || p.Info.Evictor() != sim.ActorKubelet || m == nil {
			continue
		}
		q, err := threshold.ParseQuantity(m[1])
		if err != nil {
			continue
		}
		out = append(out, sim.MemorySample{At: p.Info.Released.Add(-100 * time.Millisecond), Available: q.Value()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// killTime is when, in the second of the kubelet's eviction decision (the DisruptionTarget time), the
// pod's memory is taken to be free: the e2e node's kills freed it well within that second
// (docs/simulate.md).
const killTime = 500 * time.Millisecond

// minTime is the earlier of a and b, a zero time counting as none.
func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// running reports whether the stats show a container with memory (a killed pod's containers go).
func running(ps signal.PodStats) bool {
	for _, c := range ps.Containers {
		if c.MemoryWorkingSet != nil {
			return true
		}
	}
	return false
}

// evictedAt is when the kubelet evicted the pod: its DisruptionTarget condition's transition time
// (whole seconds), else the snapshot that first shows it Failed.
func evictedAt(p *corev1.Pod, at time.Time) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.UTC()
		}
	}
	return at
}

// memoryKey identifies a cached memory sample: the Summary's times are whole seconds, so two samples
// taken within one second share a time and differ in value.
type memoryKey struct {
	at        time.Time
	available int64
}

// addMemory adds a signal's sample unless the same cached sample was already taken.
func addMemory(dst *[]sim.MemorySample, obs map[signal.Signal]signal.Observation, sig signal.Signal,
	seen map[signal.Signal]map[memoryKey]bool) {
	o, ok := obs[sig]
	k := memoryKey{o.Time, o.Available}
	if !ok || o.Time.IsZero() || seen[sig][k] {
		return
	}
	seen[sig][k] = true
	s := append(*dst, sim.MemorySample{At: o.Time, Available: o.Available, Capacity: o.Capacity})
	sort.SliceStable(s, func(i, j int) bool { return s[i].At.Before(s[j].At) })
	*dst = s
}

// finishPods closes the pods: a pod that disappeared from the snapshots before the end is gone
// (deleted) after the last snapshot that listed it. A pod that ended and that pressure-agent's ledger
// on the node names (agent: the UIDs of any snapshot's ledger, with the ledger's time and rung of the
// eviction) is the agent's eviction, whatever its rung (an Eviction API eviction, or the DELETE after a
// PodDisruptionBudget's refusal), at the ledger's time; an Eviction API eviction the ledger does not
// name is another client's (a drain, a descheduler): gone, ended in every run. A pod the agent deleted
// after a refusal is protected by a PodDisruptionBudget that allowed no disruption then (sim.PodInfo.PDB):
// the simulated Eviction API refuses it too (soak seed 20261205 episode 29: the simulated API accepted
// both of a Deployment's pods, whose budget allowed one eviction, and freed the second 7 s early).
func finishPods(pods map[string]*recordedPod, end time.Time, agent map[string]ledgerEviction) []sim.RecordedPod {
	out := make([]sim.RecordedPod, 0, len(pods))
	for uid, rp := range pods {
		info := &rp.rp.Info
		if info.End == sim.EndNone && rp.lastAt.Before(end) {
			info.End, info.Ended = sim.EndGone, rp.lastAt
		}
		ev, byAgent := agent[uid]
		switch {
		case byAgent && (info.End == sim.EndGone || info.End == sim.EndEvicted && info.By == sim.ActorAgent):
			info.End, info.By, info.Ended = sim.EndEvicted, sim.ActorAgent, ev.At
			info.PDB = ev.Rung == string(policy.RungDelete)
		case info.End == sim.EndEvicted && info.By == sim.ActorAgent:
			info.End, info.By = sim.EndGone, ""
		}
		if info.End != sim.EndNone && (info.Released.IsZero() || info.Released.Before(info.Ended)) {
			info.Released = info.Ended
		}
		out = append(out, rp.rp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Info.Candidate.UID < out[j].Info.Candidate.UID })
	return out
}

// distinctLocal sorts the local reads by time and keeps one read per time (the first seen).
func distinctLocal(s []sim.LocalSample) []sim.LocalSample {
	sort.SliceStable(s, func(i, j int) bool { return s[i].At.Before(s[j].At) })
	var out []sim.LocalSample
	for _, x := range s {
		if n := len(out); n > 0 && out[n-1].At.Equal(x.At) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// distinctTimes sorts ts and drops repeats.
func distinctTimes(ts []time.Time) []time.Time {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var out []time.Time
	for _, t := range ts {
		if len(out) == 0 || !t.Equal(out[len(out)-1]) {
			out = append(out, t)
		}
	}
	return out
}
