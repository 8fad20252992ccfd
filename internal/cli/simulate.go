package cli

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kube-pressure/pressure/internal/decision"
	"math/rand"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	configagent "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/fileerr"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/scenario"
	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// simulateOptions are the flags of `kubectl pressure simulate`.
type simulateOptions struct {
	output        string
	plot          string
	kubeletConfig string
	agentConfig   string
	sets          []string
	seed          int64
	noAgent       bool
	// kubeletVersion overrides the recorded node's kubelet version (--kubelet-version).
	kubeletVersion string
}

func newSimulateCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var o simulateOptions
	cmd := &cobra.Command{
		Use:   "simulate (SCENARIO.yaml | RECORDING-DIR)",
		Short: "Replay a recording or a scenario through the kubelet's eviction and pressure-agent's policy",
		Long: `Simulate replays a timeline of a node through the kubelet's eviction manager (the recorded
node's release, v1.34 to v1.37, or the pinned v1.37 for a scenario: its 10 s housekeeping, cached pod
stats, memcg notifier, grace periods, transition period, minimum reclaim and ranking, with the same
decision core that explain uses) and through pressure-agent's policy with the kubelet behind it, and
prints when each evicts whom, when the node's conditions and taints change, and the differences. The
timeline is a recording ("kubectl pressure record NODE --out DIR") or a scenario file (node, kubelet
configuration, pods with usage ramps; see docs/simulate.md).

What-if: --kubelet-config and --agent-config replace the configurations, and --set changes one field:
a KubeletConfiguration field (evictionHard.memory.available=500Mi), an AgentConfiguration field
(agent.headroom.memory.available=128Mi) or a timing of the model (timing.firstSync=3s).`,
		Example: `  kubectl pressure simulate ./node-1-rec
  kubectl pressure simulate leak.yaml --set evictionHard.memory.available=500Mi --plot leak.svg
  kubectl pressure simulate ./node-1-rec --kubelet-config kubelet.yaml -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, streams, args[0])
		},
	}
	f := cmd.Flags()
	addOutputFlag(cmd, &o.output, "the same as text: its lines are never wrapped")
	f.StringVar(&o.plot, "plot", "", "also write an SVG plot of the memory signals, thresholds and evictions to `FILE`")
	f.StringVar(&o.kubeletConfig, "kubelet-config", "", "replace the kubelet's configuration with this KubeletConfiguration `FILE`")
	f.StringVar(&o.agentConfig, "agent-config", "", "replace the agent's configuration with this AgentConfiguration `FILE`")
	f.StringArrayVar(&o.sets, "set", nil, "change one configuration field, KEY=VALUE (repeatable): a kubelet field, "+
		"agent.FIELD or timing.FIELD")
	f.Int64Var(&o.seed, "seed", 0, "seed of the model's random choices (default: the scenario's seed)")
	f.BoolVar(&o.noAgent, "no-agent", false, "simulate the kubelet alone")
	f.StringVar(&o.kubeletVersion, "kubelet-version", "", "follow the eviction semantics of this kubelet `VERSION` (e.g. "+
		"v1.34.4) instead of the recorded node's (a scenario: the pinned v1.37)")
	return cmd
}

func (o simulateOptions) run(cmd *cobra.Command, streams genericiooptions.IOStreams, path string) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	sets, err := parseAssignments(o.sets)
	if err != nil {
		return err
	}
	in, err := loadSimInput(path)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("seed") {
		in.seed = o.seed
	}
	if o.kubeletVersion != "" {
		in.kubeletVersion, in.versionOrigin = o.kubeletVersion, "--kubelet-version"
	}
	if err := o.replaceConfigs(in); err != nil {
		return err
	}
	if err := in.apply(sets); err != nil {
		return err
	}
	opts, world, err := in.options(sets, o.noAgent)
	if err != nil {
		return err
	}
	res := sim.Simulate(world, opts)
	res.Notes = append(in.notes, res.Notes...)
	if o.plot != "" {
		if err := writePlot(o.plot, res); err != nil {
			return err
		}
	}
	return renderSimulation(streams, res, o.output)
}

// replaceConfigs loads --kubelet-config and --agent-config.
func (o simulateOptions) replaceConfigs(in *simInput) error {
	if o.kubeletConfig != "" {
		f, err := os.Open(o.kubeletConfig)
		if err != nil {
			return fmt.Errorf("--kubelet-config: %w", err)
		}
		defer f.Close()
		kc, err := kubeconv.LoadKubeletConfig(f, o.kubeletConfig)
		if err != nil {
			return err
		}
		in.kubelet, in.kubeletOrigin, in.located = kc, o.kubeletConfig, nil
		in.notes = append(in.notes, kc.Warnings...)
	}
	if o.agentConfig != "" {
		ac, err := configagent.LoadFile(o.agentConfig)
		if err != nil {
			return fmt.Errorf("--agent-config: %w", err)
		}
		in.agent, in.agentOrigin = ac, o.agentConfig
	}
	return nil
}

// simInput is a timeline with the configurations to run it with.
type simInput struct {
	source, node  string
	seed          int64
	kubelet       kubeconv.KubeletConfig
	kubeletOrigin string
	// located maps threshold errors to the scenario's lines (nil for other origins).
	located     *scenario.Scenario
	agent       *configagent.AgentConfiguration
	agentOrigin string
	timing      whatIfTiming
	scenario    *scenario.Scenario
	recording   *sim.Recording
	// kubeletVersion is the recorded node's status.nodeInfo.kubeletVersion or --kubelet-version;
	// versionOrigin says which ("" for a scenario without --kubelet-version: the pinned 1.37).
	kubeletVersion, versionOrigin string
	notes                         []string
	// agentView says what pressure-agent's run of a recording reads ("" for a scenario).
	agentView string
}

// semantics resolves the kubelet semantics of the run; a warning (a recording without a version, an
// unsupported version) becomes a note.
func (in *simInput) semantics() decision.Semantics {
	if in.versionOrigin == "" {
		sem := in.kubelet.Semantics("") // a scenario models the pinned kubelet: no warning
		sem.Warning = ""
		return sem
	}
	sem := in.kubelet.Semantics(in.kubeletVersion)
	if sem.Warning != "" {
		in.notes = append(in.notes, in.versionOrigin+": "+sem.Warning)
	}
	return sem
}

// whatIfTiming is what timing.FIELD of --set changes.
type whatIfTiming struct {
	sim.Timing          `json:",inline"`
	PodStatsInterval    time.Duration `json:"podStatsInterval"`
	PodStatsMaxInterval time.Duration `json:"podStatsMaxInterval"`
}

// loadSimInput reads a scenario file or a recording directory.
func loadSimInput(path string) (*simInput, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		rec, err := LoadRecording(path)
		if err != nil {
			return nil, err
		}
		in := &simInput{source: "recording " + path, node: rec.Recording.Node, kubelet: rec.Kubelet,
			kubeletOrigin: rec.KubeletFile, recording: &rec.Recording, notes: rec.Warnings,
			kubeletVersion: rec.KubeletVersion, versionOrigin: rec.VersionFile + ": status.nodeInfo.kubeletVersion",
			timing: whatIfTiming{Timing: sim.DefaultTiming()}}
		in.notes = append(in.notes, fmt.Sprintf("recording of %d snapshots; pod stats are replayed as the recording's "+
			"Summary served them (cAdvisor's cache)", rec.Recording.Snapshots))
		in.agentView = agentViewNote(rec.Recording)
		return in, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := scenario.Parse(f, path)
	if err != nil {
		return nil, err
	}
	return &simInput{source: "scenario " + path, node: s.Node, seed: s.Seed, kubelet: s.Kubelet, kubeletOrigin: path,
		located: s, agent: s.Agent, agentOrigin: path, scenario: s,
		timing: whatIfTiming{Timing: s.Timing, PodStatsInterval: s.PodStatsInterval, PodStatsMaxInterval: s.PodStatsMaxInterval}}, nil
}

// apply carries out the --set assignments.
func (in *simInput) apply(sets []assignment) error {
	for _, a := range sets {
		var err error
		switch {
		case in.recording != nil && (a.key == "timing.podStatsInterval" || a.key == "timing.podStatsMaxInterval"):
			return fmt.Errorf("--set %s: a recording replays the pod stats it recorded; only scenarios model them", a.raw)
		case hasPrefix(a.key, "timing."):
			err = setField(&in.timing, a, a.key[len("timing."):], "timing")
		case hasPrefix(a.key, "agent."):
			if in.agent == nil {
				in.agent = &configagent.AgentConfiguration{}
			}
			err = setField(in.agent, a, a.key[len("agent."):], "AgentConfiguration")
		default:
			if in.kubelet.Config == nil {
				return errors.New("no kubelet configuration to change")
			}
			err = setField(in.kubelet.Config, a, a.key, "KubeletConfiguration")
		}
		if err != nil {
			return err
		}
		in.notes = append(in.notes, "what-if: --set "+a.raw)
	}
	return nil
}

func hasPrefix(s, p string) bool { return len(s) > len(p) && s[:len(p)] == p }

// options builds the simulator's options and world.
func (in *simInput) options(sets []assignment, noAgent bool) (sim.Options, sim.World, error) {
	raw, err := threshold.ParseConfig(in.kubelet.ThresholdInput())
	if err != nil {
		return sim.Options{}, nil, in.configError(err, sets)
	}
	cfg := raw
	if cfg.Thresholds, err = threshold.UpdateContainerFsThresholds(raw.Thresholds, false, false); err != nil {
		in.notes = append(in.notes, err.Error())
	}
	t := in.timing.Timing
	if d := in.kubelet.Config.NodeStatusUpdateFrequency.Duration; d > 0 {
		t.NodeStatusUpdate = d
	}
	if err := in.checkTiming(t); err != nil {
		return sim.Options{}, nil, err
	}
	o := sim.Options{Node: in.node, Source: in.source, Seed: in.seed, Kubelet: cfg, Timing: t,
		DisableLocalStorageCapacityIsolation: in.kubelet.Config.LocalStorageCapacityIsolation != nil &&
			!*in.kubelet.Config.LocalStorageCapacityIsolation,
		AgentTaintKey: loopbreaker.TaintKey, KubeletSemantics: in.semantics()}
	if !noAgent {
		if err := in.agentOptions(&o, raw); err != nil {
			return sim.Options{}, nil, err
		}
	}
	if in.recording != nil {
		in.phase(&o.Timing, sets)
		in.localStep(&o.Timing, sets)
		in.agentRequest(&o.Timing, sets)
		in.agentEviction(&o, sets)
		return o, in.recording.World(), nil
	}
	m, err := in.scenario.Model(cfg)
	if err != nil {
		return sim.Options{}, nil, err
	}
	m.PodStatsInterval, m.PodStatsMaxInterval = in.timing.PodStatsInterval, in.timing.PodStatsMaxInterval
	in.notes = append(in.notes, m.Notes()...)
	in.notes = append(in.notes, fmt.Sprintf("pod stats: the kubelet ranks by cAdvisor's cache, which measures each pod "+
		"every %s to %s", m.PodStatsInterval, m.PodStatsMaxInterval))
	return o, m.World(rand.New(rand.NewSource(in.seed))), nil
}

// checkTiming validates the model's timing (after --set) for the timeline's length.
func (in *simInput) checkTiming(t sim.Timing) error {
	span := time.Duration(0)
	switch {
	case in.recording != nil:
		span = in.recording.End.Sub(in.recording.Start)
	case in.scenario != nil:
		span = in.scenario.Duration
	}
	errs := []error{t.Validate(span)}
	if in.recording == nil && (in.timing.PodStatsInterval < 100*time.Millisecond || in.timing.PodStatsMaxInterval < in.timing.PodStatsInterval) {
		errs = append(errs, fmt.Errorf("timing.podStatsInterval %s, podStatsMaxInterval %s: the interval at least 100ms, the maximum "+
			"at least the interval", in.timing.PodStatsInterval, in.timing.PodStatsMaxInterval))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", in.source, err)
	}
	return nil
}

// configError names where a refused kubelet setting came from: a --set, the scenario's line, or the
// configuration file.
func (in *simInput) configError(err error, sets []assignment) error {
	var out []error
	for _, e := range fileerr.Leaves(err) {
		var se *threshold.SettingError
		if errors.As(e, &se) {
			if a, ok := setBy(sets, se.Setting, se.Key); ok {
				out = append(out, fmt.Errorf("--set %s: %w", a.raw, e))
				continue
			}
		}
		switch {
		case in.located != nil:
			out = append(out, in.located.Locate(e))
		default:
			out = append(out, fmt.Errorf("%s: %w", in.kubeletOrigin, e))
		}
	}
	return errors.Join(out...)
}

// setBy returns the --set that set a kubelet setting's key.
func setBy(sets []assignment, setting, key string) (assignment, bool) {
	for i := len(sets) - 1; i >= 0; i-- {
		if k := sets[i].key; k == setting || key != "" && k == setting+"."+key {
			return sets[i], true
		}
	}
	return assignment{}, false
}

// renderSimulation writes the result as text (wide is the same), or as a SimulationResult in a machine
// format.
func renderSimulation(streams genericiooptions.IOStreams, res sim.Result, output string) error {
	if isText(output) {
		return sim.Text(streams.Out, res)
	}
	return printObject(streams.Out, KindSimulationResult, res, output)
}

// writePlot writes the SVG plot.
func writePlot(path string, res sim.Result) error {
	var buf bytes.Buffer
	if err := sim.Plot(&buf, res); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}

// agentViewNote says which source pressure-agent's run of the recording reads its fresh reads from.
func agentViewNote(r sim.Recording) string {
	if len(r.Local) == 0 {
		return "pressure-agent's run reads the Summary API's cache: no local samples in the recording " +
			"(record on the node with --local to have the agent's view)"
	}
	return fmt.Sprintf("pressure-agent's run reads the agent's view: %d local cgroup samples, every %s (the kubelet's "+
		"runs rank by the Summary's cache)", len(r.Local), r.LocalInterval().Round(time.Millisecond))
}
