package decision

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// StorageLimit is the local ephemeral-storage limit that put a pod on the local-storage path: which
// of the kubelet's three checks fired is Eviction.MetricLabel (LabelEmptyDirLimit,
// LabelEphemeralPodLimit, LabelEphemeralContainerLim).
type StorageLimit struct {
	// Name is the emptyDir volume or the container; "" for the pod's total limit.
	Name string
	// Used is the usage in bytes the check compared with Limit (strictly greater fires): the volume's
	// used bytes, the pod's ephemeral-storage usage, or the container's logs plus, without a dedicated
	// imagefs, its writable layer.
	Used  int64
	Limit rank.Amount
}

// localHit is one check that fired.
type localHit struct {
	label, message string
	limit          StorageLimit
}

// localResult is one candidate the local-storage path acts on (evicts) or, critical, refuses.
type localResult struct {
	index int // in the candidates
	ev    Eviction
}

// localStorageScan is the kubelet's localStorageEviction: for every candidate with stats, in input
// order, the first of the emptyDir sizeLimit, pod ephemeral-storage limit and container
// ephemeral-storage limit checks that fires evicts the pod (grace 1 s, no annotations, no condition).
// Critical pods are never evicted; the refusal stops that check and the next check runs, so a
// critical pod is refused once per check that fires; it is returned once, with its first.
func localStorageScan(cands []rank.Candidate, layout signal.FilesystemLayout, sem Semantics, tr *Trace) (evicted, refused []localResult) {
	for i, c := range cands {
		if c.Stats == nil {
			continue
		}
		first := true
		for _, check := range []func(rank.Candidate, signal.FilesystemLayout, Semantics) (localHit, bool){
			emptyDirCheck, podLimitCheck, containerLimitCheck,
		} {
			hit, fired := check(c, layout, sem)
			if !fired {
				continue
			}
			limit := hit.limit
			e := Eviction{UID: c.UID, Namespace: c.Namespace, Name: c.Name, Path: PathLocalStorage,
				Threshold: -1, MetricLabel: hit.label, Message: hit.message, Grace: graceFor(immediateGraceSeconds),
				Limit: &limit}
			if c.Critical {
				tr.add(KindSkip, podName(c), "cannot evict a critical pod ("+c.CriticalReason+"): "+hit.message)
				if first {
					refused = append(refused, localResult{i, e})
					first = false
				}
				continue
			}
			tr.add(KindLocal, podName(c), fmt.Sprintf("evict (%s, grace %ds): %q", hit.label, immediateGraceSeconds, hit.message))
			evicted = append(evicted, localResult{i, e})
			break
		}
	}
	return evicted, refused
}

// localStorageEvictions returns the evictions of the local-storage path.
func localStorageEvictions(cands []rank.Candidate, layout signal.FilesystemLayout, sem Semantics, tr *Trace) []Eviction {
	evicted, _ := localStorageScan(cands, layout, sem, tr)
	var out []Eviction
	for _, r := range evicted {
		out = append(out, r.ev)
	}
	return out
}

// emptyDirCheck fires for the first emptyDir (spec order) with sizeLimit > 0 whose used bytes exceed it.
// A 1.37 kubelet with InPlacePodVerticalScalingMemoryBackedVolumes skips memory-backed emptyDirs.
func emptyDirCheck(c rank.Candidate, _ signal.FilesystemLayout, sem Semantics) (localHit, bool) {
	used := map[string]*uint64{}
	for _, vs := range c.Stats.Volumes {
		used[vs.Name] = vs.UsedBytes // the kubelet keeps the last entry of a name
	}
	for _, v := range c.Volumes {
		if v.Kind != rank.VolumeEmptyDir || v.SizeLimit == nil || v.SizeLimit.Value <= 0 {
			continue
		}
		if v.Medium == "Memory" && sem.memoryEmptyDirExempt() {
			continue
		}
		if u := used[v.Name]; u != nil && v.SizeLimit.ExceededBy(int64(*u)) {
			return localHit{LabelEmptyDirLimit,
				fmt.Sprintf("Usage of EmptyDir volume %q exceeds the limit %q. ", v.Name, v.SizeLimit.String()),
				StorageLimit{Name: v.Name, Used: int64(*u), Limit: *v.SizeLimit}}, true
		}
	}
	return localHit{}, false
}

// podLimitCheck fires when the pod's ephemeral-storage usage exceeds its total ephemeral-storage limit.
func podLimitCheck(c rank.Candidate, _ signal.FilesystemLayout, _ Semantics) (localHit, bool) {
	if c.EphemeralStorageLimit == nil {
		return localHit{}, false
	}
	used := value(c.Stats.EphemeralStorageUsed)
	if c.EphemeralStorageLimit.ExceededBy(used) {
		return localHit{LabelEphemeralPodLimit,
			fmt.Sprintf("Pod ephemeral local storage usage exceeds the total limit of containers %s. ",
				c.EphemeralStorageLimit.String()),
			StorageLimit{Used: used, Limit: *c.EphemeralStorageLimit}}, true
	}
	return localHit{}, false
}

// containerLimitCheck fires for the first container (stats order) whose logs (+ rootfs without a
// dedicated imagefs) exceed its non-zero ephemeral-storage limit. Regular containers have limits here,
// and from 1.37 on sidecars (restartable init containers) too.
func containerLimitCheck(c rank.Candidate, layout signal.FilesystemLayout, sem Semantics) (localHit, bool) {
	limits := map[string]rank.Amount{}
	for _, ct := range c.Containers {
		counted := ct.Kind == rank.ContainerRegular || ct.Kind == "" ||
			(ct.Kind == rank.ContainerSidecar && sem.sidecarEphemeralLimits())
		if counted && ct.EphemeralStorageLimit != nil && ct.EphemeralStorageLimit.Value != 0 {
			limits[ct.Name] = *ct.EphemeralStorageLimit
		}
	}
	for _, cs := range c.Stats.Containers {
		used := value(cs.LogsUsed)
		if !layout.DedicatedImageFs {
			used += value(cs.RootfsUsed)
		}
		if limit, ok := limits[cs.Name]; ok && limit.ExceededBy(used) {
			return localHit{LabelEphemeralContainerLim,
				fmt.Sprintf("Container %s exceeded its local ephemeral storage limit %q. ", cs.Name, limit.String()),
				StorageLimit{Name: cs.Name, Used: used, Limit: limit}}, true
		}
	}
	return localHit{}, false
}

func value(p *uint64) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

func podName(c rank.Candidate) string { return c.Namespace + "/" + c.Name }
