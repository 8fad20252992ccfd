package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/explain"
)

// DefaultNodesConcurrency is how many kubelets `kubectl pressure nodes` asks at once.
const DefaultNodesConcurrency = 32

// NodeMargin is one node's row of `kubectl pressure nodes`.
type NodeMargin struct {
	Node string `json:"node"`
	// Tightest is the node's tightest signal (nil when unknown: no answer, or nothing observed).
	Tightest *explain.Margin `json:"tightest,omitempty"`
	// TimeToThreshold is the time until the tightest signal reaches its threshold at the current
	// trend; empty when unknown (one Summary sample has no trend).
	TimeToThreshold string `json:"timeToThreshold,omitempty"`
	// ThresholdsMet are the signals whose threshold is met now.
	ThresholdsMet []string `json:"thresholdsMet,omitempty"`
	// Conditions are the node's pressure conditions that are True.
	Conditions []string `json:"conditions,omitempty"`
	// Error says why the node is missing from the answer (partial result): the kubelet did not
	// answer within the per-node timeout, or its documents were unusable.
	Error string `json:"error,omitempty"`
}

// NodesReport is the answer of `kubectl pressure nodes`: every node, tightest first.
type NodesReport struct {
	Items []NodeMargin `json:"items"`
	// Partial is true when at least one node has no answer (its Error says why).
	Partial bool `json:"partial"`
}

// NodesOptions tune how the nodes are asked.
type NodesOptions struct {
	// Concurrency is how many kubelets are asked at once; Timeout bounds each request to a node.
	Concurrency int
	Timeout     time.Duration
	// Selector, when not empty, is a label selector: only the matching nodes are listed, and only
	// their kubelets asked.
	Selector string
	// Trend, when positive, asks each kubelet's Summary again after this long and gives the time to
	// the threshold at the rate the tightest signal fell in between (by the stats' own times).
	Trend time.Duration
}

// Nodes lists every node (or those matching opts.Selector) and asks each kubelet (Summary and /configz through the apiserver's node
// proxy) for its tightest margin, opts.Concurrency at a time, each within opts.Timeout. A node that
// does not answer is kept with its Error and the report marked partial. Items are sorted tightest
// first (Margin.TighterThan), nodes without an answer last, ties by node name: a total order.
func Nodes(ctx context.Context, cs kubernetes.Interface, opts NodesOptions) (NodesReport, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: opts.Selector})
	if err != nil {
		if opts.Selector != "" {
			return NodesReport{}, fmt.Errorf("list nodes with selector %q: %w", opts.Selector, err)
		}
		return NodesReport{}, fmt.Errorf("list nodes: %w", err)
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	items := make([]NodeMargin, len(list.Items))
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	for i := range list.Items {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			items[i] = nodeMargin(ctx, cs, &list.Items[i], opts)
		}(i)
	}
	wg.Wait()
	r := NodesReport{Items: items}
	for _, it := range items {
		r.Partial = r.Partial || it.Error != ""
	}
	sort.Slice(r.Items, func(i, j int) bool { return nodeLess(r.Items[i], r.Items[j]) })
	return r, ctx.Err()
}

func nodeLess(a, b NodeMargin) bool {
	switch {
	case a.Tightest != nil && b.Tightest != nil:
		if a.Tightest.TighterThan(*b.Tightest) || b.Tightest.TighterThan(*a.Tightest) {
			return a.Tightest.TighterThan(*b.Tightest)
		}
	case a.Tightest != nil || b.Tightest != nil:
		return a.Tightest != nil
	}
	return a.Node < b.Node
}

// nodeMargin asks one node's kubelet and computes its tightest margin (and, with opts.Trend, the
// time to its threshold); the node object itself comes from the list, the pods are not needed.
func nodeMargin(ctx context.Context, cs kubernetes.Interface, n *corev1.Node, opts NodesOptions) NodeMargin {
	out := NodeMargin{Node: n.Name, Conditions: pressureConditions(n)}
	r, s, err := nodeReport(ctx, cs, n, opts.Timeout, nil)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	m, ok := explain.TightestMargin(r)
	out.ThresholdsMet = r.Kubelet.ThresholdsMet
	if !ok {
		return out
	}
	out.Tightest = &m
	if opts.Trend <= 0 {
		return out
	}
	select {
	case <-ctx.Done():
		return out
	case <-time.After(opts.Trend):
	}
	later, _, err := nodeReport(ctx, cs, n, opts.Timeout, s)
	if err != nil {
		out.TimeToThreshold = "unknown (second sample: " + err.Error() + ")"
		return out
	}
	out.TimeToThreshold = trendWords(explain.TrendOf(r, later, m.Threshold))
	if m2, ok := explain.TightestMargin(later); ok && m2.Threshold == m.Threshold {
		out.Tightest = &m2 // the margin the time to threshold starts from
	}
	return out
}

func trendWords(t explain.Trend) string {
	switch {
	case !t.Known:
		return "unknown (stats did not advance)"
	case !t.Falling:
		return "not falling"
	}
	return t.TimeToThreshold.String()
}

// nodeReport fetches a node's Summary (and its /configz, unless prev already has it) and builds its
// report without pods.
func nodeReport(ctx context.Context, cs kubernetes.Interface, n *corev1.Node, timeout time.Duration,
	prev *Snapshot) (explain.Report, *Snapshot, error) {
	raw, origin := map[string][]byte{}, map[string]string{}
	for _, name := range []string{FileSummary, FileKubeletConfig} {
		origin[name] = "GET " + kubeletPath(n.Name, name)
	}
	s := &Snapshot{Raw: raw, Origin: origin}
	files := []string{FileSummary, FileKubeletConfig}
	if prev != nil {
		files, s.KubeletConfig, raw[FileKubeletConfig] = files[:1], prev.KubeletConfig, prev.Raw[FileKubeletConfig]
	}
	if err := fetchKubelet(ctx, cs, n.Name, timeout, raw, origin, files...); err != nil {
		return explain.Report{}, nil, errors.New(strings.Join(errorLines(err), "; "))
	}
	node := n.DeepCopy()
	node.TypeMeta = metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}
	s.Node = *node
	errs := []error{s.parseSummary(raw[FileSummary])}
	if prev == nil {
		errs = append(errs, s.parseKubeletConfig(raw[FileKubeletConfig]))
	}
	if err := errors.Join(errs...); err != nil {
		return explain.Report{}, nil, errors.New(strings.Join(errorLines(err), "; "))
	}
	in, err := ExplainInput(s, "live", time.Now())
	if err != nil {
		return explain.Report{}, nil, err
	}
	return explain.Build(in), s, nil
}

// pressureConditions lists the node's *Pressure conditions that are True, by name.
func pressureConditions(n *corev1.Node) []string {
	var out []string
	for _, c := range n.Status.Conditions {
		if strings.HasSuffix(string(c.Type), "Pressure") && c.Status == corev1.ConditionTrue {
			out = append(out, string(c.Type))
		}
	}
	sort.Strings(out)
	return out
}

func newNodesCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	opts := NodesOptions{Concurrency: DefaultNodesConcurrency, Timeout: DefaultKubeletTimeout}
	var output string
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "Every node's tightest eviction margin, tightest first",
		Long: `Nodes asks every node's kubelet (or, with -l, the kubelets of the nodes matching the selector) (Summary API and /configz through the apiserver's node proxy) and
shows, per node, the signal closest to its eviction threshold relative to its capacity: available,
threshold, margin, and the time to the threshold at the current trend when known. Tightest first; nodes
whose kubelet does not answer within --kubelet-timeout are listed last with the reason, and the answer is
marked partial.`,
		Example: `  kubectl pressure nodes
  kubectl pressure nodes -o wide
  kubectl pressure nodes -l node-role.kubernetes.io/worker=
  kubectl pressure nodes -o json --concurrency 64 --kubelet-timeout 3s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if _, err := labels.Parse(opts.Selector); err != nil {
				return fmt.Errorf("--selector %q: %w", opts.Selector, err)
			}
			if opts.Concurrency < 1 {
				return fmt.Errorf("--concurrency %d: must be at least 1", opts.Concurrency)
			}
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
			// client-go's default limiter (5 QPS, burst 10) would spread 2 requests per node over
			// minutes on a large cluster, and its wait counts against the per-node timeout.
			cfg.QPS, cfg.Burst = float32(4*opts.Concurrency), 4*opts.Concurrency
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			r, err := Nodes(cmd.Context(), cs, opts)
			if err != nil {
				return err
			}
			return renderNodes(streams, r, output)
		},
	}
	addOutputFlag(cmd, &output, "the table with the thresholds met, the conditions and the errors")
	cmd.Flags().StringVarP(&opts.Selector, "selector", "l", "", "label selector (as kubectl's -l): only the matching "+
		"nodes are listed and their kubelets asked")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", DefaultNodesConcurrency, "how many kubelets to ask at once")
	cmd.Flags().DurationVar(&opts.Trend, "trend", 0, "ask each Summary again after this long (the kubelet refreshes "+
		"its stats every 10-20s) and show the time to the threshold at the rate the tightest signal fell; 0: no trend")
	addKubeletTimeout(cmd, &opts.Timeout)
	return cmd
}

// completeNodes completes a NODE argument with the names of the cluster's nodes (cobra's
// ValidArgsFunction); nothing, and no file names, when the cluster cannot be asked.
func completeNodes(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) != 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cs, err := clientset(flags)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), DefaultKubeletTimeout)
		defer cancel()
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range list.Items {
			if strings.HasPrefix(n.Name, toComplete) {
				out = append(out, n.Name)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
