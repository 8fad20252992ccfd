package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/sim"
)

// FileCgroups holds the agent's own view of the node in a snapshot taken with --local: the pods
// cgroup and every pod's cgroup read with pressure-agent's reader (internal/source/cgroupfs). It is
// optional: a snapshot without it is read as before.
const FileCgroups = "cgroups.json"

// KindCgroupSamples is the kind of FileCgroups.
const KindCgroupSamples = "CgroupSamples"

// CgroupSamples is the content of FileCgroups: the reads taken since the previous snapshot of a
// recording (one for `snapshot --local`), ascending by time.
type CgroupSamples struct {
	Kind string `json:"kind"`
	// Layout describes the cgroup tree read (cgroupfs.Layout.String).
	Layout string `json:"layout"`
	// Every is the interval of the reads ("" for a single read).
	Every   string         `json:"every,omitempty"`
	Samples []CgroupSample `json:"samples"`
}

// CgroupSample is one read of the node's cgroups. Absent is not zero: a signal or cgroup that could not
// be read is left out and its error listed in Errors.
type CgroupSample struct {
	Time time.Time `json:"time"`
	// MemoryAvailable and AllocatableMemoryAvailable are the signals as pressure-agent computes them.
	MemoryAvailable            *SignalValue `json:"memoryAvailable,omitempty"`
	AllocatableMemoryAvailable *SignalValue `json:"allocatableMemoryAvailable,omitempty"`
	// PodsCgroup is the pods cgroup's memory.
	PodsCgroup *CgroupMemory `json:"podsCgroup,omitempty"`
	// Pods are the pods' cgroups by UID.
	Pods   map[string]CgroupMemory `json:"pods,omitempty"`
	Errors []string                `json:"errors,omitempty"`
}

// SignalValue is one memory signal: available bytes of capacity.
type SignalValue struct {
	Available int64 `json:"available"`
	Capacity  int64 `json:"capacity"`
}

// CgroupMemory is one memory cgroup's usage, working set (usage − inactive_file, at least 0) and
// inactive_file, and active_file when memory.stat has it, in bytes.
type CgroupMemory struct {
	Usage        uint64  `json:"usage"`
	WorkingSet   uint64  `json:"workingSet"`
	InactiveFile uint64  `json:"inactiveFile"`
	ActiveFile   *uint64 `json:"activeFile,omitempty"`
}

// ParseCgroupSamples reads FileCgroups from r; file names it in errors, with the field and the value.
func ParseCgroupSamples(r io.Reader, file string) (*CgroupSamples, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &FileError{File: file, Err: err}
	}
	var cs CgroupSamples
	if err := decodeJSON(file, data, &cs); err != nil {
		return nil, err
	}
	if cs.Kind != KindCgroupSamples {
		return nil, &FileError{File: file, Field: "kind", Value: cs.Kind, Err: fmt.Errorf("want %q", KindCgroupSamples)}
	}
	if cs.Every != "" {
		if d, err := time.ParseDuration(cs.Every); err != nil || d <= 0 {
			return nil, &FileError{File: file, Field: "every", Value: cs.Every, Err: errors.New("want a positive duration")}
		}
	}
	for i := range cs.Samples {
		if err := checkCgroupSample(file, cs.Samples, i); err != nil {
			return nil, err
		}
	}
	return &cs, nil
}

// checkCgroupSample checks the i-th sample: a time, after the previous one, and consistent numbers.
func checkCgroupSample(file string, s []CgroupSample, i int) error {
	x, at := s[i], fmt.Sprintf("samples[%d]", i)
	switch {
	case x.Time.IsZero():
		return &FileError{File: file, Field: at + ".time", Err: errors.New("missing: every read has its time")}
	case i > 0 && x.Time.Before(s[i-1].Time):
		return &FileError{File: file, Field: at + ".time", Value: x.Time.Format(time.RFC3339Nano),
			Err: fmt.Errorf("before samples[%d]'s %s: the reads are in time order", i-1, s[i-1].Time.Format(time.RFC3339Nano))}
	}
	for _, sv := range []struct {
		name string
		v    *SignalValue
	}{{"memoryAvailable", x.MemoryAvailable}, {"allocatableMemoryAvailable", x.AllocatableMemoryAvailable}} {
		if sv.v != nil && sv.v.Capacity <= 0 {
			return &FileError{File: file, Field: at + "." + sv.name + ".capacity", Value: fmt.Sprint(sv.v.Capacity),
				Err: errors.New("want a positive capacity")}
		}
	}
	if x.PodsCgroup != nil {
		if err := checkCgroupMemory(file, at+".podsCgroup", *x.PodsCgroup); err != nil {
			return err
		}
	}
	for _, uid := range sortedUIDs(x.Pods) {
		if uid == "" {
			return &FileError{File: file, Field: at + ".pods", Value: uid, Err: errors.New("a pod's uid is empty")}
		}
		if err := checkCgroupMemory(file, at+".pods."+uid, x.Pods[uid]); err != nil {
			return err
		}
	}
	return nil
}

// checkCgroupMemory rejects a working set above the usage.
func checkCgroupMemory(file, at string, m CgroupMemory) error {
	if m.WorkingSet > m.Usage {
		return &FileError{File: file, Field: at + ".workingSet", Value: fmt.Sprint(m.WorkingSet),
			Err: fmt.Errorf("above the usage %d: the working set is usage − inactive_file", m.Usage)}
	}
	return nil
}

func sortedUIDs(m map[string]CgroupMemory) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// marshalCgroupSamples is FileCgroups' content (indented, as the other files of a snapshot).
func marshalCgroupSamples(cs CgroupSamples) ([]byte, error) {
	cs.Kind = KindCgroupSamples
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cs); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// localSamples converts the reads into the simulator's: the signals' working sets and the pods' stats.
func localSamples(cs *CgroupSamples) []sim.LocalSample {
	out := make([]sim.LocalSample, 0, len(cs.Samples))
	for _, x := range cs.Samples {
		l := sim.LocalSample{At: x.Time, Pods: map[string]signal.PodStats{}}
		if v := x.MemoryAvailable; v != nil {
			l.Memory.NodeCapacity, l.Memory.NodeWorkingSet = v.Capacity, v.Capacity-v.Available
		}
		if v := x.AllocatableMemoryAvailable; v != nil {
			l.Memory.PodsCapacity, l.Memory.PodsWorkingSet, l.Memory.PodsKnown = v.Capacity, v.Capacity-v.Available, true
		}
		for uid, m := range x.Pods {
			l.Pods[uid] = podStatsOf(uid, m, x.Time)
		}
		out = append(out, l)
	}
	return out
}

// podStatsOf is a pod's read as pressure-agent's reader gives it: the pod's working set and the file
// LRU sizes of its memory.stat (no containers: the agent reads the pod cgroup).
func podStatsOf(uid string, m CgroupMemory, at time.Time) signal.PodStats {
	ms := &signal.MemoryStat{InactiveFile: signal.Uint64(m.InactiveFile), ActiveFile: m.ActiveFile}
	return signal.PodStats{UID: uid, Time: at, MemoryWorkingSet: signal.Uint64(m.WorkingSet), Memory: ms}
}
