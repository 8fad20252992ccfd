package rank

import "github.com/kube-pressure/pressure/internal/signal"

// ReferenceOrder is a deliberately naive ranker used to check Rank differentially: it builds an explicit
// key tuple per candidate straight from the kubelet's description (spec §3.5) and repeatedly selects the
// smallest tuple. It is slow (quadratic) and shares no code with Rank beyond the Candidate type.
// It returns the input indexes in eviction order.
func ReferenceOrder(sig signal.Signal, layout signal.FilesystemLayout, cands []Candidate) []int {
	tuples := make([]refTuple, len(cands))
	for i, c := range cands {
		tuples[i] = refTuple{keys: refKeys(sig, layout, c), name: c.Namespace + "/" + c.Name, uid: c.UID, index: i}
	}
	used := make([]bool, len(cands))
	out := make([]int, 0, len(cands))
	for range cands {
		best := -1
		for i := range tuples {
			if !used[i] && (best < 0 || tuples[i].less(tuples[best])) {
				best = i
			}
		}
		used[best] = true
		out = append(out, tuples[best].index)
	}
	return out
}

type refTuple struct {
	keys  []int64
	name  string
	uid   string
	index int
}

func (a refTuple) less(b refTuple) bool {
	for i := range a.keys {
		if a.keys[i] != b.keys[i] {
			return a.keys[i] < b.keys[i]
		}
	}
	if a.name != b.name {
		return a.name < b.name
	}
	if a.uid != b.uid {
		return a.uid < b.uid
	}
	return a.index < b.index
}

// refKeys returns the ascending key tuple. A stats-based key becomes two numbers: 0 for "no stats" (which
// ranks first and ties with other stat-less pods) or 1 followed by the value.
func refKeys(sig signal.Signal, layout signal.FilesystemLayout, c Candidate) []int64 {
	has := c.Stats != nil
	statKey := func(v int64) []int64 {
		if !has {
			return []int64{0, 0}
		}
		return []int64{1, v}
	}
	notExceeds := func(usage, request int64) int64 {
		if usage > request {
			return 0
		}
		return 1
	}
	var keys []int64
	switch sig {
	case signal.MemoryAvailable, signal.AllocatableMemoryAvailable:
		var ws int64
		if has && c.Stats.MemoryWorkingSet != nil {
			ws = int64(*c.Stats.MemoryWorkingSet)
		}
		keys = append(keys, statKey(notExceeds(ws, c.MemoryRequest))...)
		keys = append(keys, int64(c.Priority))
		keys = append(keys, statKey(-(ws - c.MemoryRequest))...)
	case signal.PIDAvailable:
		var n int64
		if has && c.Stats.ProcessCount != nil {
			n = int64(*c.Stats.ProcessCount)
		}
		keys = append(keys, int64(c.Priority))
		keys = append(keys, statKey(-n)...)
	default:
		parts, ok := refDiskParts(sig, layout)
		if !ok {
			return nil
		}
		inodes := sig == signal.NodeFsInodesFree || sig == signal.ImageFsInodesFree || sig == signal.ContainerFsInodesFree
		usage := refDiskUsage(c, parts, inodes)
		request := c.EphemeralStorageRequest
		if inodes {
			request = 0
		}
		keys = append(keys, statKey(notExceeds(usage, request))...)
		keys = append(keys, int64(c.Priority))
		keys = append(keys, statKey(-(usage - c.EphemeralStorageRequest))...)
	}
	return keys
}

// refDiskParts is the kubelet's layout table written out: which of rootfs, logs and local volumes count.
func refDiskParts(sig signal.Signal, layout signal.FilesystemLayout) ([3]bool, bool) {
	all, logsVol, rootOnly, none := [3]bool{true, true, true}, [3]bool{false, true, true}, [3]bool{true, false, false}, [3]bool{}
	type row struct{ nodefs, imagefs, containerfs [3]bool }
	var r row
	switch {
	case layout.DedicatedImageFs && layout.SplitContainerFs:
		r = row{all, none, all}
	case layout.DedicatedImageFs:
		r = row{logsVol, rootOnly, rootOnly}
	default:
		r = row{all, all, all}
	}
	switch sig {
	case signal.NodeFsAvailable, signal.NodeFsInodesFree:
		return r.nodefs, true
	case signal.ImageFsAvailable, signal.ImageFsInodesFree:
		return r.imagefs, true
	case signal.ContainerFsAvailable, signal.ContainerFsInodesFree:
		return r.containerfs, true
	}
	return none, false
}

func refDiskUsage(c Candidate, parts [3]bool, inodes bool) int64 {
	if c.Stats == nil {
		return 0
	}
	val := func(b, i *uint64) int64 {
		p := b
		if inodes {
			p = i
		}
		if p == nil {
			return 0
		}
		return int64(*p)
	}
	var sum int64
	for _, cs := range c.Stats.Containers {
		if parts[0] {
			sum += val(cs.RootfsUsed, cs.RootfsInodes)
		}
		if parts[1] {
			sum += val(cs.LogsUsed, cs.LogsInodes)
		}
	}
	if !parts[2] {
		return sum
	}
	for _, v := range c.Volumes {
		local := v.Kind == VolumeHostPath || v.Kind == VolumeGitRepo || v.Kind == VolumeConfigMap ||
			(v.Kind == VolumeEmptyDir && v.Medium == "")
		if !local {
			continue
		}
		for _, vs := range c.Stats.Volumes {
			if vs.Name == v.Name {
				sum += val(vs.UsedBytes, vs.InodesUsed)
				break
			}
		}
	}
	return sum
}
