package cli

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kube-pressure/pressure/internal/decision"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/kubeconv"
)

// explainOptions are the flags of `kubectl pressure explain`.
type explainOptions struct {
	snapshot       string
	output         string
	agentConfig    string
	kubeletTimeout time.Duration
	kubeletVersion string
	local          localFlags
}

func newExplainCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var o explainOptions
	cmd := &cobra.Command{
		Use:   "explain (NODE | --snapshot DIR | --local)",
		Short: "Explain when the kubelet evicts on a node, and in which order",
		Long: `Explain shows, for a live node or a snapshot directory, the node allocatable math, the usage at which
every eviction threshold fires, every signal now (available, threshold, margin, stats age), the node's
conditions, and what the kubelet would do if the pressure persisted: thresholds met, node conditions, the
resource reclaimed, and the predicted eviction order with the key that placed each pod and the kubelet's
exact eviction message; then what pressure-agent would do with its own policy (its thresholds with
headroom, the pods it would evict at one sync, in order, and why that differs from the kubelet), with
the settings of --agent-config or the agent's defaults.`,
		Example: `  kubectl pressure explain node-1
  kubectl pressure explain --snapshot ./node-1-snapshot -o json
  kubectl pressure explain node-1 --agent-config ./agent-config.yaml
  kubectl pressure explain --local --kubelet-config /var/lib/kubelet/config.yaml`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeNodes(flags),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, flags, streams, args)
		},
	}
	cmd.Flags().StringVar(&o.kubeletVersion, "kubelet-version", "", "follow the eviction semantics of this kubelet `VERSION` "+
		"(e.g. v1.34.4) instead of the node's status.nodeInfo.kubeletVersion")
	cmd.Flags().StringVar(&o.snapshot, "snapshot", "", "explain the snapshot directory `DIR` (written by kubectl pressure snapshot) instead of a live node")
	addOutputFlag(cmd, &o.output, "text never wrapped; text wraps its prose at $COLUMNS or the terminal's width")
	cmd.Flags().StringVar(&o.agentConfig, "agent-config", "", "predict pressure-agent with the settings of this `FILE` (an "+
		agentcfg.Kind+", as the agent reads it); without it, the agent's defaults")
	addKubeletTimeout(cmd, &o.kubeletTimeout)
	o.local.addFlags(cmd.Flags())
	return cmd
}

func (o explainOptions) run(cmd *cobra.Command, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams,
	args []string) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if err := localOnly(cmd, o.local.enabled); err != nil {
		return err
	}
	agent, err := loadAgentSettings(o.agentConfig)
	if err != nil {
		return err
	}
	if o.local.enabled {
		if o.snapshot != "" {
			return errLocalWithSnapshot
		}
		in, err := o.local.input(cmd.Context(), flags, args, time.Now())
		if err != nil {
			return err
		}
		in.Warnings = append(in.Warnings, configWarnings(o.local.opts.KubeletConfig)...)
		if o.kubeletVersion != "" {
			in.Semantics = decision.ResolveSemantics(o.kubeletVersion)
		}
		in.Agent = agent
		return render(streams, explain.Build(in), o.output)
	}
	snap, source, now, err := o.load(cmd, flags, args)
	if err != nil {
		return err
	}
	in, err := ExplainInput(snap, source, now)
	if err != nil {
		return err
	}
	if o.kubeletVersion != "" {
		in.Semantics = KubeletSemantics(snap, o.kubeletVersion)
	}
	in.Agent = agent
	return render(streams, explain.Build(in), o.output)
}

// load reads the snapshot directory or fetches the live node.
func (o explainOptions) load(cmd *cobra.Command, flags *genericclioptions.ConfigFlags,
	args []string) (*Snapshot, string, time.Time, error) {
	if o.snapshot != "" {
		snap, err := LoadSnapshotDir(os.DirFS(o.snapshot), o.snapshot)
		if err != nil {
			return nil, "", time.Time{}, err
		}
		if len(args) == 1 && args[0] != snap.Node.Name {
			return nil, "", time.Time{}, fmt.Errorf("node %q given, but snapshot %s is of node %q", args[0], o.snapshot, snap.Node.Name)
		}
		return snap, "snapshot " + o.snapshot, time.Time{}, nil
	}
	if len(args) != 1 {
		return nil, "", time.Time{}, errors.New("nothing to explain: give a NODE (live, through the " +
			"apiserver), --snapshot DIR (a directory kubectl pressure snapshot wrote) or --local (on the node itself, from its " +
			"cgroups and kubelet config)")
	}
	cs, err := clientset(flags)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	snap, err := FetchLive(cmd.Context(), cs, args[0], o.kubeletTimeout)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	return snap, "live", time.Now(), nil
}

func clientset(flags *genericclioptions.ConfigFlags) (kubernetes.Interface, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}

// render writes the report in the chosen format: json, yaml and the templates through printObject (an
// ExplainResult), which also say the report's partial notes and warnings on stderr ("Warning: ...").
// Text wraps its prose at the terminal's width (COLUMNS first) and is coloured on a terminal unless
// NO_COLOR is set; wide is text that never wraps.
func render(streams genericiooptions.IOStreams, r explain.Report, output string) error {
	if !isText(output) {
		// json, yaml and the templates carry the warnings in the report, or drop them: say them on
		// stderr too, as kubectl does.
		for _, w := range append(append([]string{}, r.Unavailable...), r.Warnings...) {
			if _, err := fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w); err != nil {
				return err
			}
		}
	}
	switch output {
	case OutputText:
		width, color := terminal(streams.Out)
		return explain.TextWith(streams.Out, r, explain.TextOptions{Width: width, Color: color})
	case OutputWide:
		_, color := terminal(streams.Out)
		return explain.TextWith(streams.Out, r, explain.TextOptions{Color: color})
	}
	return printObject(streams.Out, KindExplainResult, r, output)
}

// localOnlyFlags are the flags that only --local reads.
var localOnlyFlags = []string{"kubelet-config", "cgroup-root", "proc-root", "kubelet-root-dir", "runtime-root", "pod-logs-dir", "node-name"}

// localOnly rejects a --local-only flag given without --local: it would be silently ignored.
func localOnly(cmd *cobra.Command, local bool) error {
	if local {
		return nil
	}
	for _, name := range localOnlyFlags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return fmt.Errorf("--%s %q: only --local reads it (a snapshot or a live node brings its own kubelet "+
				"config and stats); drop it or add --local", name, f.Value.String())
		}
	}
	return nil
}

// addKubeletTimeout adds --kubelet-timeout, the bound of the calls to the kubelet through the
// apiserver's node proxy.
func addKubeletTimeout(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "kubelet-timeout", DefaultKubeletTimeout, "how long to wait for a node's kubelet (Summary API "+
		"and /configz through the apiserver's node proxy) before giving up; 0 waits forever")
}

// configWarnings returns the strict-decoding warnings of the --local kubelet config file and its
// quantities beyond int64 (none when no file is given; an unreadable file is already an error of the
// local input).
func configWarnings(file string) []string {
	if file == "" {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var data bytes.Buffer
	kc, err := kubeconv.LoadKubeletConfig(io.TeeReader(f, &data), file)
	if err != nil {
		return nil
	}
	return append(kc.Warnings, hugeQuantities(file, data.Bytes())...)
}
