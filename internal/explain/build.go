package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Build computes the Report of in. It never fails: problems that do not prevent an explanation
// (a kubelet that would refuse its reservations, containerfs thresholds the kubelet ignores) become
// Report.Warnings.
func Build(in Input) Report {
	r := Report{Node: in.Node, Source: in.Source, Now: in.Now, Warnings: append([]string{}, in.Warnings...),
		Unavailable: append([]string(nil), in.Unavailable...)}
	if in.Semantics.Warning != "" {
		r.Warnings = append(r.Warnings, in.Semantics.Warning)
	}
	if r.Now.IsZero() {
		r.Now = newestStats(in.Snapshot)
	}
	cfg := in.Config
	kubelet := in.Config
	layout := in.Snapshot.Filesystems
	ts, err := threshold.UpdateContainerFsThresholds(cfg.Thresholds, layout.DedicatedImageFs, layout.SplitContainerFs)
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("kubelet config: %s (the kubelet derives the containerfs "+
			"thresholds from the filesystem layout: %s)", oneLine(err), layoutWords(layout)))
	}
	cfg.Thresholds = ts
	alloc, err := threshold.Allocatable(in.Capacity, cfg)
	if err != nil {
		r.Warnings = append(r.Warnings, "node allocatable: the kubelet would refuse to start: "+oneLine(err))
	}
	r.Allocatable, r.AllocatableMath = allocations(alloc, cfg)
	r.Thresholds = firings(cfg, alloc, in.Capacity, in.Snapshot)
	for _, f := range r.Thresholds {
		if f.Known && f.FiresAbove == "0" && f.Resolved != f.Capacity {
			r.Warnings = append(r.Warnings, "kubelet config: "+f.Explanation)
		}
	}
	r.Signals = signalRows(cfg, in.Snapshot, r.Now)
	r.NodeConditions = append([]NodeCondition{}, in.NodeConditions...)
	sort.SliceStable(r.NodeConditions, func(i, j int) bool { return r.NodeConditions[i].Type < r.NodeConditions[j].Type })
	r.Avoidances = activeAvoidances(in.Avoidances, r.Now)
	in.Config = cfg
	r.Kubelet = predict(in, r.Now)
	r.Pressure = agentAnswer(in, kubelet, cfg, r.Now, r.Kubelet)
	r.Verdict = verdict(r)
	return r
}

// newestStats returns the newest observation or pod stats time of s (zero when none).
func newestStats(s signal.Snapshot) time.Time {
	var t time.Time
	for _, o := range s.Observations {
		if o.Time.After(t) {
			t = o.Time
		}
	}
	for _, p := range s.Pods {
		if p.Time.After(t) {
			t = p.Time
		}
	}
	return t
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

func layoutWords(l signal.FilesystemLayout) string {
	switch {
	case l.DedicatedImageFs && l.SplitContainerFs:
		return "dedicated imagefs, writable layers on nodefs"
	case l.DedicatedImageFs:
		return "dedicated imagefs holding images and writable layers"
	case l.SplitContainerFs:
		return "writable layers split from images"
	}
	return "single filesystem"
}

// allocations renders the allocatable arithmetic of every resource.
func allocations(alloc threshold.NodeAllocatable, cfg threshold.Config) (map[string]string, []Allocation) {
	out := map[string]string{}
	rows := []Allocation{}
	for _, ra := range alloc.Resources {
		u := unitOfResource(ra.Resource)
		a := Allocation{Resource: ra.Resource, Capacity: exact(ra.Capacity, u), KubeReserved: exact(ra.KubeReserved, u),
			SystemReserved: exact(ra.SystemReserved, u), HardEviction: exact(ra.HardEviction, u),
			HardEvictionThreshold: reservationThreshold(cfg, ra.Resource),
			Allocatable:           exact(ra.Allocatable, u), PercentOfCapacity: percentOf(ra.Allocatable, ra.Capacity), res: ra}
		if ra.HugePages != 0 {
			a.HugePages = exact(ra.HugePages, u)
		}
		if ra.Resource == threshold.ResourceMemory && alloc.PodsEnforced {
			a.PodsCgroupLimit = exact(ra.PodsCgroupLimit, u)
		}
		out[ra.Resource] = a.Allocatable
		rows = append(rows, a)
	}
	return out, rows
}

// reservationThreshold names the hard threshold reserved for a resource (the last one wins, as in
// the kubelet's hardEvictionReservation).
func reservationThreshold(cfg threshold.Config, res string) string {
	want := map[string]signal.Signal{threshold.ResourceMemory: signal.MemoryAvailable,
		threshold.ResourceEphemeralStorage: signal.NodeFsAvailable}[res]
	name := ""
	for _, t := range cfg.ReservationThresholds {
		if want != "" && t.Signal == want && !t.Inert() {
			name = t.String()
		}
	}
	return name
}
