package vm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// markAvail prefixes the guest's available-memory watcher lines (guestinit/avail.go: keep in sync).
const markAvail = "=== pressure-vm avail "

// availBandMiB is the watcher's band: it prints the pods cgroup's allocatable available memory while
// below it, every 10 ms (guestinit.availPeriod) when it moves by a MiB. It spans the chart's default
// agent threshold on the race node (the kubelet's 100Mi plus the agent's headroom).
const availBandMiB = 512

// NoCrossingSampled starts RaceResult.LatencyWhy when the watcher has no sample at or below the agent's
// threshold before its request: the watcher, starved of the guest's CPU, looked later than the agent.
const NoCrossingSampled = "no sample at or below"

// availSample is one watcher line: when (the guest's clock) and the pods cgroup's memory.max minus
// its working set.
type availSample struct {
	at    time.Time
	avail int64
}

func parseAvail(line string) (availSample, bool) {
	f := strings.Fields(strings.TrimPrefix(line, markAvail))
	if len(f) != 2 {
		return availSample{}, false
	}
	ns, err1 := strconv.ParseInt(f[0], 10, 64)
	v, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return availSample{}, false
	}
	return availSample{at: time.Unix(0, ns), avail: v}, true
}

// evictLine is the agent's "evict" log line: the pod, the signal and threshold it acted on, and when
// it started the eviction request (the guest's clock, like the watcher's).
type evictLine struct {
	Msg       string    `json:"msg"`
	Pod       string    `json:"pod"`
	Signal    string    `json:"signal"`
	Threshold string    `json:"threshold"`
	Requested time.Time `json:"requested_at"`
	// The deciding sync's phases (zero in an agent older than them).
	SyncStarted time.Time `json:"sync_started_at"`
	ReadDone    time.Time `json:"read_done_at"`
	Decided     time.Time `json:"decided_at"`
	SyncCPU     string    `json:"sync_cpu"`
}

// split is where a crossing → request latency d went, from the evict line's phases: when the deciding
// sync started after the crossing (negative: before it, so the read caught the crossing in flight),
// then its read, its decision and the start of the request. "" without the phases.
func (e evictLine) split(d time.Duration) string {
	if e.SyncStarted.IsZero() || e.ReadDone.IsZero() || e.Decided.IsZero() {
		return ""
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	crossing := e.Requested.Add(-d)
	split := fmt.Sprintf("sync started %s after the crossing, read %s, decided %s, request %s",
		ms(e.SyncStarted.Sub(crossing)), ms(e.ReadDone.Sub(e.SyncStarted)), ms(e.Decided.Sub(e.ReadDone)), ms(e.Requested.Sub(e.Decided)))
	if e.SyncCPU != "" {
		split += "; the agent's CPU from the sync's start to its decision " + e.SyncCPU
	}
	return split
}

// parseEvictLine reads an evict line from a line of the agent's container log (CRI format: the JSON
// follows the runtime's timestamp, stream and tag).
func parseEvictLine(line string) (evictLine, bool) {
	i := strings.Index(line, "{")
	if i < 0 {
		return evictLine{}, false
	}
	var e evictLine
	if err := json.Unmarshal([]byte(line[i:]), &e); err != nil || e.Msg != "evict" || e.Requested.IsZero() {
		return evictLine{}, false
	}
	return e, true
}

// crossingToRequest is the time from the crossing of the agent's threshold, as the watcher sampled
// the pods cgroup, to the agent's start of the request for pod: the first sample at or below the
// threshold after the last one above it before the request. The watcher reads every 10 ms, so the
// true crossing is up to one period (and a read) earlier than the sample that saw it. It explains
// why when there is no such figure: no evict line for pod, another signal, or no crossing sampled.
func crossingToRequest(avail []availSample, evicts []evictLine, pod string) (time.Duration, evictLine, error) {
	var ev *evictLine
	for i := range evicts {
		if evicts[i].Pod == pod {
			ev = &evicts[i]
			break
		}
	}
	switch {
	case ev == nil:
		return 0, evictLine{}, fmt.Errorf("no evict line for %s in the agent's log", pod)
	case ev.Signal != "allocatableMemory.available":
		return 0, *ev, fmt.Errorf("the agent acted on %s, the watcher samples allocatableMemory.available", ev.Signal)
	}
	q, err := resource.ParseQuantity(ev.Threshold)
	if err != nil {
		return 0, *ev, fmt.Errorf("threshold %q of the evict line: %w", ev.Threshold, err)
	}
	limit := q.Value()
	var crossing time.Time
	for _, s := range avail {
		if s.at.After(ev.Requested) {
			break
		}
		switch {
		case s.avail > limit:
			crossing = time.Time{}
		case crossing.IsZero():
			crossing = s.at
		}
	}
	if crossing.IsZero() {
		return 0, *ev, fmt.Errorf("%s %s (%d bytes) before the request at %s", NoCrossingSampled, ev.Threshold, limit, ev.Requested.Format(time.RFC3339Nano))
	}
	return ev.Requested.Sub(crossing), *ev, nil
}

// availSamples are the watcher's lines so far.
func (n *Node) availSamples() []availSample {
	return parsed(n.Guest.OutputLines(markAvail), parseAvail)
}

// AvailSamples is how many lines the guest's watcher has printed (none: it never saw the pods cgroup's
// allocatable available memory below its band).
func (n *Node) AvailSamples() int { return len(n.availSamples()) }

// latency is crossingToRequest for pod from the guest's output and its split, or why there is none.
func (n *Node) latency(pod, evictor string) (d time.Duration, split, why string) {
	if evictor != "agent" {
		return 0, "", "not evicted by the agent"
	}
	d, ev, err := crossingToRequest(n.availSamples(), parsed(n.Guest.OutputLines(""), parseEvictLine), pod)
	if err != nil {
		return 0, "", err.Error()
	}
	return d, ev.split(d), ""
}
