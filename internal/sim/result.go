package sim

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Actor is who did something in a run.
type Actor string

// Actors.
const (
	ActorKubelet Actor = "kubelet"
	ActorAgent   Actor = "pressure-agent"
	// ActorNode is the Node object: conditions written by the kubelet's status update and the taint
	// the node lifecycle controller puts on for them.
	ActorNode Actor = "node"
	// ActorWorld is the node's memory itself (threshold crossings).
	ActorWorld Actor = "world"
)

// Kind classifies an event.
type Kind string

// Event kinds.
const (
	KindEvict Kind = "evict"
	// KindEvictAgain is a kubelet sync whose victim another of its syncs is killing: it joins that kill
	// and evicts no other pod (not a new eviction).
	KindEvictAgain Kind = "evict-again"
	KindCondition  Kind = "condition"
	KindTaint      Kind = "taint"
	KindCrossing   Kind = "crossing"
	KindNotify     Kind = "notify"
	KindKill       Kind = "kill"
	// KindReclaim: the agent reclaimed a pod's page cache instead of evicting it (the reclaim rung).
	KindReclaim Kind = "reclaim"
	// KindRefused is an agent's eviction a PodDisruptionBudget refused: the pod keeps running.
	KindRefused Kind = "refused"
	// KindAvoid is the avoidance of the node an agent's eviction starts or extends for the pod's owner
	// (escalated after an eviction loop).
	KindAvoid Kind = "avoid"
	// KindKept is a pod kept off the node: its owner avoids the node when it appears.
	KindKept Kind = "kept-off"
)

// Run names.
const (
	RunKubelet = "kubelet"
	RunAgent   = "agent"
)

// Event is one line of a run's timeline.
type Event struct {
	At time.Time `json:"at"`
	// Offset is At − the timeline's start.
	Offset   Duration  `json:"offset"`
	Run      string    `json:"run"`
	Actor    Actor     `json:"actor"`
	Kind     Kind      `json:"kind"`
	Subject  string    `json:"subject"`
	Detail   string    `json:"detail"`
	Eviction *Eviction `json:"eviction,omitempty"`
}

// Eviction is what an evict event knows about the victim and the decision.
type Eviction struct {
	Pod string `json:"pod"`
	UID string `json:"uid"`
	// Order is the eviction's place in its run (1 = first).
	Order     int    `json:"order"`
	Signal    string `json:"signal"`
	Available string `json:"available"`
	Threshold string `json:"threshold"`
	// Rank is the pod's place in the ranking of its sync, of Ranked pods; DecidedBy the key that put
	// it before the next one.
	Rank      int    `json:"rank,omitempty"`
	Ranked    int    `json:"ranked,omitempty"`
	DecidedBy string `json:"decidedBy,omitempty"`
	// StatsAge is how old the pod stats the decision ranked by were.
	StatsAge Duration `json:"statsAge"`
	// Usage is the pod's working set in those stats ("" without stats).
	Usage        string `json:"usage,omitempty"`
	GraceSeconds int64  `json:"gracePeriodSeconds"`
	// Terminating is set when the pod was already being evicted by the other actor.
	Terminating bool `json:"terminating,omitempty"`
	// Rung is the agent's rung that ended the pod when it is not the Eviction API ("delete": a
	// PodDisruptionBudget refused, the ladder fell back to a DELETE); "" otherwise.
	Rung    string `json:"rung,omitempty"`
	Message string `json:"message"`
	// Avoidance is the avoidance of the node the agent's eviction leaves its owner (nil: none).
	Avoidance *AvoidanceInfo `json:"avoidance,omitempty"`
}

// Duration marshals as a Go duration string.
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// RunResult is one run of the simulation.
type RunResult struct {
	Name string `json:"name"`
	// Title says what the run simulates.
	Title   string  `json:"title"`
	Events  []Event `json:"events"`
	Summary Summary `json:"summary"`
	// samples are the memory signals over time, for the plot.
	samples []sample
}

// Summary sums up a run.
type Summary struct {
	Evictions      int               `json:"evictions"`
	ByKubelet      int               `json:"byKubelet"`
	ByAgent        int               `json:"byAgent"`
	FirstEviction  *Duration         `json:"firstEviction,omitempty"`
	MinAvailable   map[string]string `json:"minAvailable"`
	BelowThreshold map[string]string `json:"belowKubeletThreshold"`
	MemoryPressure Duration          `json:"memoryPressure"`
}

// sample is the observed memory signals of a run at one tick.
type sample struct {
	at        time.Time
	node, pod int64 // available
	hasPods   bool
}

// Outcome is what happened to one pod in one run or in the recording.
type Outcome struct {
	At     time.Time `json:"at"`
	Offset Duration  `json:"offset"`
	By     Actor     `json:"by"`
	Order  int       `json:"order"`
}

// RecordedEviction is an eviction the recorded kubelet or pressure-agent made (Outcome.By).
type RecordedEviction struct {
	Pod     string `json:"pod"`
	UID     string `json:"uid"`
	Message string `json:"message,omitempty"`
	Outcome
}

// Difference compares one pod across the runs (and the recording).
type Difference struct {
	Pod      string   `json:"pod"`
	Kubelet  *Outcome `json:"kubelet"`
	Agent    *Outcome `json:"agent,omitempty"`
	Recorded *Outcome `json:"recorded,omitempty"`
}

// ThresholdLine is a resolved threshold for the plot and the header.
type ThresholdLine struct {
	Actor     Actor  `json:"actor"`
	Signal    string `json:"signal"`
	Threshold string `json:"threshold"`
	Bytes     int64  `json:"bytes"`
}

// Result is the outcome of Simulate.
type Result struct {
	Node   string    `json:"node"`
	Source string    `json:"source"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Seed   int64     `json:"seed"`
	Timing Timing    `json:"timing"`
	// Kubelet describes the kubelet's configuration in one line.
	Kubelet    string          `json:"kubelet"`
	Thresholds []ThresholdLine `json:"thresholds"`
	// AgentThresholds are the agent's thresholds at the end of its run.
	AgentThresholds []ThresholdLine `json:"agentThresholds,omitempty"`
	Runs            []RunResult     `json:"runs"`
	// Recorded are the evictions in the recording itself (replays only).
	Recorded    []RecordedEviction `json:"recorded,omitempty"`
	Differences []Difference       `json:"differences"`
	Notes       []string           `json:"notes,omitempty"`
	// world is the recording's own memory signals (replays), for the plot.
	world []sample
}

// FormatBytes prints a byte amount like the kubelet's quantities (BinarySI, "1536Mi").
func FormatBytes(v int64) string {
	if v < 0 {
		return "-" + resource.NewQuantity(-v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.BinarySI).String()
}

// formatMi prints a byte amount in MiB with one decimal ("180.5Mi"), for timelines.
func formatMi(v int64) string { return fmt.Sprintf("%.1fMi", float64(v)/(1<<20)) }

// FormatOffset prints a time offset as m:ss.s ("+1:02.3").
func FormatOffset(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	d = d.Round(100 * time.Millisecond)
	m := int(d / time.Minute)
	s := float64(d%time.Minute) / float64(time.Second)
	return fmt.Sprintf("%s%d:%04.1f", sign, m, s)
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
