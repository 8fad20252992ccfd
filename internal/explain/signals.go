package explain

import (
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// firings says, for every configured (non-inert) threshold, the usage at which it is met.
func firings(cfg threshold.Config, alloc threshold.NodeAllocatable, capacity map[string]int64,
	snap signal.Snapshot) []Firing {
	out := []Firing{}
	seen := map[string]bool{}
	for _, t := range cfg.Thresholds {
		if t.Inert() || seen[t.String()] {
			continue // a threshold configured and also derived (allocatableMemory.available) is shown once
		}
		seen[t.String()] = true
		f := Firing{Threshold: t.String(), Signal: string(t.Signal), Hard: t.IsHard()}
		capa, src, ok := capacityFor(t.Signal, snap, capacity, alloc)
		if !ok {
			f.Explanation = fmt.Sprintf("%s: unknown capacity (no observation of %s), so the usage at which it fires is unknown",
				t.String(), t.Signal)
			out = append(out, f)
			continue
		}
		u := unitOfSignal(t.Signal)
		resolved := t.Value.Resolve(capa)
		fires := capa - resolved
		base := capa
		if t.Signal == signal.AllocatableMemoryAvailable && capacity[threshold.ResourceMemory] > 0 {
			base = capacity[threshold.ResourceMemory]
		}
		f.Known, f.Capacity, f.CapacitySource = true, exact(capa, u), src
		if fires < 0 {
			f.Resolved, f.FiresAbove = exact(resolved, u), "0"
			f.Explanation = fmt.Sprintf("%s is always met: its threshold %s is above the %s %s, so %s eviction "+
				"starts at any usage", t.String(), human(resolved, u), src, human(capa, u), t.Signal.Resource())
			out = append(out, f)
			continue
		}
		f.Resolved, f.FiresAbove, f.PercentOfCapacity = exact(resolved, u), exact(fires, u), percentOf(fires, base)
		f.Explanation = fmt.Sprintf("%s eviction starts when %s exceeds %s, %s of %s (%s%s: %s %s − threshold %s)",
			t.Signal.Resource(), usageWords(t.Signal), human(fires, u), percent(f.PercentOfCapacity), baseWords(t.Signal),
			t.String(), graceWords(t), src, human(capa, u), human(resolved, u))
		out = append(out, f)
	}
	return out
}

// capacityFor returns the capacity a threshold on sig resolves against: the observation's, else
// what the node's capacity says (memory, nodefs) or the pods cgroup limit.
func capacityFor(sig signal.Signal, snap signal.Snapshot, capacity map[string]int64,
	alloc threshold.NodeAllocatable) (int64, string, bool) {
	if o, ok := snap.Observations[sig]; ok {
		return o.Capacity, "observed capacity", true
	}
	switch sig {
	case signal.MemoryAvailable:
		v, ok := capacity[threshold.ResourceMemory]
		return v, "node capacity", ok
	case signal.NodeFsAvailable:
		v, ok := capacity[threshold.ResourceEphemeralStorage]
		return v, "node capacity", ok
	case signal.AllocatableMemoryAvailable:
		ra, ok := alloc.Get(threshold.ResourceMemory)
		return ra.PodsCgroupLimit, "pods cgroup limit", ok
	}
	return 0, "", false
}

// usageWords says what the usage of a signal is.
func usageWords(sig signal.Signal) string {
	switch sig {
	case signal.MemoryAvailable:
		return "the node's working set"
	case signal.AllocatableMemoryAvailable:
		return "the pods' working set"
	case signal.PIDAvailable:
		return "the number of processes (threads)"
	}
	fs := fsName(sig)
	if sig.Resource() == signal.ResourceInodes {
		return "the number of inodes used on " + fs
	}
	return "the space used on " + fs
}

func baseWords(sig signal.Signal) string {
	switch sig {
	case signal.MemoryAvailable, signal.AllocatableMemoryAvailable:
		return "node memory capacity"
	case signal.PIDAvailable:
		return "the pid limit"
	}
	if sig.Resource() == signal.ResourceInodes {
		return fsName(sig) + " inodes"
	}
	return fsName(sig) + " capacity"
}

func fsName(sig signal.Signal) string {
	switch sig {
	case signal.ImageFsAvailable, signal.ImageFsInodesFree:
		return "imagefs"
	case signal.ContainerFsAvailable, signal.ContainerFsInodesFree:
		return "containerfs"
	}
	return "nodefs"
}

func graceWords(t threshold.Threshold) string {
	if t.IsHard() {
		return ", hard"
	}
	return ", soft"
}

// signalRows lists every configured (non-inert) threshold against its observation, then the
// observed signals no threshold watches, by name.
func signalRows(cfg threshold.Config, snap signal.Snapshot, now time.Time) []SignalRow {
	out := []SignalRow{}
	watched := map[signal.Signal]bool{}
	seen := map[string]bool{}
	for _, t := range cfg.Thresholds {
		if t.Inert() || seen[t.String()] {
			continue
		}
		seen[t.String()] = true
		watched[t.Signal] = true
		row := SignalRow{Signal: string(t.Signal), Threshold: t.String(), sig: t.Signal}
		if o, ok := snap.Observations[t.Signal]; ok {
			u := unitOfSignal(t.Signal)
			resolved := t.Value.Resolve(o.Capacity)
			observed(&row, o, now)
			row.Resolved = exact(resolved, u)
			row.margn = o.Available - resolved
			row.Margin = exact(row.margn, u)
			row.Met = threshold.Met(t, o, false)
		}
		out = append(out, row)
	}
	for _, s := range snap.Signals() {
		if watched[s] {
			continue
		}
		row := SignalRow{Signal: string(s), sig: s}
		observed(&row, snap.Observations[s], now)
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Signal < out[j].Signal })
	return out
}

func observed(row *SignalRow, o signal.Observation, now time.Time) {
	u := unitOfSignal(row.sig)
	row.Observed = true
	row.avail = o.Available
	row.Available, row.Capacity = exact(o.Available, u), exact(o.Capacity, u)
	if !o.Time.IsZero() {
		row.StatsTime = o.Time.UTC()
		if !now.IsZero() {
			row.StatsAgeSeconds = seconds(now.Sub(o.Time))
		}
	}
}
