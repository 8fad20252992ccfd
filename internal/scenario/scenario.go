package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	yaml "go.yaml.in/yaml/v3"

	configagent "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// MaxBytes bounds what Parse reads: a scenario is a few KiB.
const MaxBytes = 1 << 20

// maxPods bounds the pods of a scenario.
const maxPods = 1000

// Defaults of a scenario.
const (
	DefaultDuration = 5 * time.Minute
	DefaultNodeName = "sim-node"
	// DefaultPodStatsInterval and DefaultPodStatsMaxInterval model cAdvisor's cache of pod stats: its
	// 10 s housekeeping interval with jitter up to twice that, as seen on the e2e node
	// (docs/simulate.md).
	DefaultPodStatsInterval    = 10 * time.Second
	DefaultPodStatsMaxInterval = 20 * time.Second
)

// Scenario is a parsed scenario file: a node, its kubelet's configuration, optionally the agent's,
// the timing of the model and the pods with their usage.
type Scenario struct {
	File     string
	Node     string
	Seed     int64
	Duration time.Duration
	// Memory is the node's memory capacity; System the working set outside the pods cgroup.
	Memory int64
	System sim.Ramp
	Pods   []sim.ModelPod
	// Kubelet is the kubelet section as a KubeletConfiguration file (file semantics: defaults apply).
	Kubelet kubeconv.KubeletConfig
	// Agent is the agent section as an AgentConfiguration; nil when the scenario has none.
	Agent *configagent.AgentConfiguration
	// Timing is sim.DefaultTiming with the scenario's overrides.
	Timing                                sim.Timing
	PodStatsInterval, PodStatsMaxInterval time.Duration

	// kubeletNode is the kubelet section, to locate configuration errors.
	kubeletNode *yaml.Node
}

var topFields = []string{"node", "duration", "seed", "kubelet", "agent", "timing", "pods"}

// Parse reads a scenario from r; name (the file path) starts every error. All problems found are
// returned, joined, each an *Error naming the line, the field and the value.
func Parse(r io.Reader, name string) (*Scenario, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", name, err)
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxBytes)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Err: errors.New("empty file, want a scenario (node, kubelet, pods)")}
		}
		return nil, &Error{File: name, Err: fmt.Errorf("not YAML: %w", err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, at(name, "", &extra, errors.New("a second YAML document: a scenario is one document"))
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: name, Err: errors.New("empty file, want a scenario (node, kubelet, pods)")}
	}
	d := &doc{file: name}
	s := d.scenario(root.Content[0])
	if err := errors.Join(d.errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func (d *doc) scenario(n *yaml.Node) *Scenario {
	s := &Scenario{File: d.file, Node: DefaultNodeName, Duration: DefaultDuration, Timing: sim.DefaultTiming(),
		PodStatsInterval: DefaultPodStatsInterval, PodStatsMaxInterval: DefaultPodStatsMaxInterval}
	f := d.mapping("", n, topFields...)
	d.node(s, f["node"])
	if v, ok := f["duration"]; ok {
		if dur, good := d.duration("duration", v); good {
			if dur == 0 {
				d.fail("duration", v, "must be positive")
			}
			s.Duration = dur
		}
	}
	if v, ok := f["seed"]; ok {
		s.Seed, _ = d.integer("seed", v, -1<<63, 1<<63-1)
	}
	s.kubeletNode = f["kubelet"]
	s.Kubelet = d.kubelet(f["kubelet"])
	if v, ok := f["agent"]; ok {
		s.Agent = d.agent(v)
	}
	d.timing(s, f["timing"])
	d.pods(s, f["pods"])
	return s
}

func (d *doc) node(s *Scenario, n *yaml.Node) {
	if n == nil {
		d.errs = append(d.errs, &Error{File: d.file, Field: "node.memory", Err: errRequired})
		return
	}
	f := d.mapping("node", n, "name", "memory", "systemUsage")
	if v, ok := f["name"]; ok {
		if name, good := d.scalar("node.name", v); good {
			s.Node = name
		}
	}
	v, ok := f["memory"]
	if !ok {
		d.fail("node.memory", n, "%v", errRequired)
	} else if m, good := d.bytes("node.memory", v); good {
		if m == 0 {
			d.fail("node.memory", v, "must be positive")
		}
		s.Memory = m
	}
	if v, ok := f["systemUsage"]; ok {
		s.System, _ = d.ramp("node.systemUsage", v)
	}
}

var timingFields = []string{"step", "firstSync", "syncDuration", "housekeeping", "podStatsInterval", "podStatsMaxInterval",
	"podKill", "podCleanup", "agentEviction"}

func (d *doc) timing(s *Scenario, n *yaml.Node) {
	f := d.mapping("timing", n, timingFields...)
	set := func(key string, dst *time.Duration, positive bool) {
		v, ok := f[key]
		if !ok {
			return
		}
		if dur, good := d.duration("timing."+key, v); good {
			if positive && dur == 0 {
				d.fail("timing."+key, v, "must be positive")
				return
			}
			*dst = dur
		}
	}
	set("step", &s.Timing.Step, true)
	set("firstSync", &s.Timing.FirstSync, false)
	set("syncDuration", &s.Timing.SyncDuration, false)
	set("housekeeping", &s.Timing.Housekeeping, true)
	set("podStatsInterval", &s.PodStatsInterval, true)
	set("podStatsMaxInterval", &s.PodStatsMaxInterval, true)
	set("podKill", &s.Timing.PodKill, false)
	set("podCleanup", &s.Timing.PodCleanup, false)
	set("agentEviction", &s.Timing.AgentEviction, false)
	if v := f["podStatsInterval"]; v != nil && s.PodStatsInterval > 0 && s.PodStatsInterval < 100*time.Millisecond {
		d.fail("timing.podStatsInterval", v, "below 100ms")
	}
	if err := s.Timing.Validate(s.Duration); err != nil && len(d.errs) == 0 {
		d.fail("timing", n, "%v", err)
	}
	if v := f["podStatsMaxInterval"]; v != nil && s.PodStatsMaxInterval < s.PodStatsInterval {
		d.fail("timing.podStatsMaxInterval", v, "below podStatsInterval %s", s.PodStatsInterval)
	}
	if v := f["step"]; v != nil && s.Timing.Step > 0 && s.Timing.Step < 10*time.Millisecond {
		d.fail("timing.step", v, "below 10ms")
	}
}

// Epoch is the start of every scenario's timeline.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Model returns the scenario's node for the kubelet configuration cfg (which gives the pods cgroup
// limit: memory − kubeReserved − systemReserved when "pods" is enforced).
func (s *Scenario) Model(cfg threshold.Config) (sim.Model, error) {
	alloc, err := threshold.Allocatable(map[string]int64{threshold.ResourceMemory: s.Memory}, cfg)
	if err != nil {
		return sim.Model{}, fmt.Errorf("%s: kubelet: %w", s.File, err)
	}
	mem, _ := alloc.Get(threshold.ResourceMemory)
	return sim.Model{Start: Epoch, Duration: s.Duration, NodeCapacity: s.Memory, PodsCapacity: mem.PodsCgroupLimit,
		System: s.System, Pods: s.Pods, PodStatsInterval: s.PodStatsInterval, PodStatsMaxInterval: s.PodStatsMaxInterval}, nil
}

// HasPDB reports whether a PodDisruptionBudget protects one of the pods (pods[].pdb).
func (s *Scenario) HasPDB() bool {
	for _, p := range s.Pods {
		if p.PDB {
			return true
		}
	}
	return false
}

// HasOwners reports whether one of the pods names its owner (pods[].owner).
func (s *Scenario) HasOwners() bool {
	for _, p := range s.Pods {
		if p.Candidate.OwnerKind != "" {
			return true
		}
	}
	return false
}
