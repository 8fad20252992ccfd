package decision

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// localStorageEvictions is the kubelet's localStorageEviction: for every candidate with stats, in input
// order, the first of the emptyDir sizeLimit, pod ephemeral-storage limit and container
// ephemeral-storage limit checks that fires evicts the pod (grace 1 s, no annotations, no condition).
// Critical pods are never evicted; the refusal stops that check and the next check runs.
func localStorageEvictions(cands []rank.Candidate, layout signal.FilesystemLayout, tr *Trace) []Eviction {
	var out []Eviction
	for _, c := range cands {
		if c.Stats == nil {
			continue
		}
		for _, check := range []func(rank.Candidate, signal.FilesystemLayout) (string, string, bool){
			emptyDirCheck, podLimitCheck, containerLimitCheck,
		} {
			msg, label, fired := check(c, layout)
			if !fired {
				continue
			}
			if c.Critical {
				tr.add(KindSkip, podName(c), "cannot evict a critical pod ("+c.CriticalReason+"): "+msg)
				continue
			}
			e := Eviction{UID: c.UID, Namespace: c.Namespace, Name: c.Name, Path: PathLocalStorage,
				Threshold: -1, MetricLabel: label, Message: msg, Grace: graceFor(immediateGraceSeconds)}
			tr.add(KindLocal, podName(c), fmt.Sprintf("evict (%s, grace %ds): %q", label, immediateGraceSeconds, msg))
			out = append(out, e)
			break
		}
	}
	return out
}

// emptyDirCheck fires for the first emptyDir (spec order) with sizeLimit > 0 whose used bytes exceed it.
func emptyDirCheck(c rank.Candidate, _ signal.FilesystemLayout) (string, string, bool) {
	used := map[string]*uint64{}
	for _, vs := range c.Stats.Volumes {
		used[vs.Name] = vs.UsedBytes // the kubelet keeps the last entry of a name
	}
	for _, v := range c.Volumes {
		if v.Kind != rank.VolumeEmptyDir || v.SizeLimit == nil || v.SizeLimit.Value <= 0 {
			continue
		}
		if u := used[v.Name]; u != nil && int64(*u) > v.SizeLimit.Value {
			return fmt.Sprintf("Usage of EmptyDir volume %q exceeds the limit %q. ", v.Name, v.SizeLimit.String()),
				LabelEmptyDirLimit, true
		}
	}
	return "", "", false
}

// podLimitCheck fires when the pod's ephemeral-storage usage exceeds its total ephemeral-storage limit.
func podLimitCheck(c rank.Candidate, _ signal.FilesystemLayout) (string, string, bool) {
	if c.EphemeralStorageLimit == nil {
		return "", "", false
	}
	var used int64
	if c.Stats.EphemeralStorageUsed != nil {
		used = int64(*c.Stats.EphemeralStorageUsed)
	}
	if used > c.EphemeralStorageLimit.Value {
		return fmt.Sprintf("Pod ephemeral local storage usage exceeds the total limit of containers %s. ",
			c.EphemeralStorageLimit.String()), LabelEphemeralPodLimit, true
	}
	return "", "", false
}

// containerLimitCheck fires for the first container (stats order) whose logs (+ rootfs without a
// dedicated imagefs) exceed its non-zero ephemeral-storage limit. Only regular containers have limits here.
func containerLimitCheck(c rank.Candidate, layout signal.FilesystemLayout) (string, string, bool) {
	limits := map[string]rank.Amount{}
	for _, ct := range c.Containers {
		if (ct.Kind == rank.ContainerRegular || ct.Kind == "") && ct.EphemeralStorageLimit != nil &&
			ct.EphemeralStorageLimit.Value != 0 {
			limits[ct.Name] = *ct.EphemeralStorageLimit
		}
	}
	for _, cs := range c.Stats.Containers {
		used := value(cs.LogsUsed)
		if !layout.DedicatedImageFs {
			used += value(cs.RootfsUsed)
		}
		if limit, ok := limits[cs.Name]; ok && limit.Value < used {
			return fmt.Sprintf("Container %s exceeded its local ephemeral storage limit %q. ", cs.Name, limit.String()),
				LabelEphemeralContainerLim, true
		}
	}
	return "", "", false
}

func value(p *uint64) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

func podName(c rank.Candidate) string { return c.Namespace + "/" + c.Name }
