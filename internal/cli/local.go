package cli

// The flags and pod listing of `explain --local` build on every OS; reading the node (LocalInput) is
// Linux-only (local_linux.go): elsewhere it fails with errLocalUnsupported (local_other.go).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// LocalSource is the Source of a report built from the node this command runs on.
const LocalSource = "local"

// Defaults of the --local flags.
const (
	DefaultKubeletRootDir = "/var/lib/kubelet"
	DefaultRuntimeRoot    = "/var/lib/containerd"
	DefaultPodLogsDir     = "/var/log/pods"
)

// LocalOptions say where `explain --local` reads the node it runs on.
type LocalOptions struct {
	// Node is the name printed in the report (and whose pods are listed when a cluster is given).
	Node string
	// KubeletConfig is a KubeletConfiguration file (YAML or JSON, or /configz output); "" means
	// the kubelet's defaults.
	KubeletConfig string
	// ProcRoot, CgroupRoot, KubeletRootDir and RuntimeRoot are the roots of the readers.
	ProcRoot, CgroupRoot, KubeletRootDir, RuntimeRoot string
	// PodLogsDir is the kubelet's podLogsDir: with the kubelet root dir's pods directory, each pod's
	// local volumes and logs are measured there (internal/source/podfs, as pressure-agent does).
	PodLogsDir string
}

// localFlags are the flags of `explain --local`.
type localFlags struct {
	enabled bool
	opts    LocalOptions
}

func (l *localFlags) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&l.enabled, "local", false, "explain the node this command runs on from /proc, the cgroup filesystem and statfs; no cluster needed (Linux only)")
	fs.StringVar(&l.opts.KubeletConfig, "kubelet-config", "", "with --local: the kubelet's KubeletConfiguration file (default: the kubelet's defaults)")
	fs.StringVar(&l.opts.CgroupRoot, "cgroup-root", defaultCgroupRoot, "with --local: where the cgroup filesystems are mounted")
	fs.StringVar(&l.opts.ProcRoot, "proc-root", procfs.DefaultRoot, "with --local: where procfs is mounted")
	fs.StringVar(&l.opts.KubeletRootDir, "kubelet-root-dir", DefaultKubeletRootDir, "with --local: the kubelet's --root-dir (nodefs)")
	fs.StringVar(&l.opts.RuntimeRoot, "runtime-root", DefaultRuntimeRoot, "with --local: the container runtime's root (imagefs)")
	fs.StringVar(&l.opts.PodLogsDir, "pod-logs-dir", DefaultPodLogsDir, "with --local: the kubelet's podLogsDir (the pods' log usage, measured like pressure-agent does)")
	fs.StringVar(&l.opts.Node, "node-name", "", "with --local: the node's name (default: the hostname); with a kubeconfig, its pods are ranked too")
}

// input builds the local report's input, and returns the Node object and its pods as listed (nil when
// not read). Pods are listed only when --node-name and a kubeconfig (--kubeconfig or $KUBECONFIG) are
// both given.
func (l *localFlags) input(ctx context.Context, flags *genericclioptions.ConfigFlags, args []string,
	now time.Time) (explain.Input, *corev1.Node, []corev1.Pod, error) {
	if len(args) != 0 {
		return explain.Input{}, nil, nil, fmt.Errorf("--local explains the node it runs on: give its name with --node-name, not %q", args[0])
	}
	opts := l.opts
	withPods := opts.Node != "" && (ptrString(flags.KubeConfig) != "" || os.Getenv("KUBECONFIG") != "")
	if opts.Node == "" {
		host, err := os.Hostname()
		if err != nil {
			return explain.Input{}, nil, nil, fmt.Errorf("--local: node name: %w", err)
		}
		opts.Node = host
	}
	in, err := LocalInput(opts, now)
	if err != nil || !withPods {
		return in, nil, nil, err
	}
	cs, err := clientset(flags)
	if err != nil {
		return explain.Input{}, nil, nil, err
	}
	list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", opts.Node).String()})
	if err != nil {
		return explain.Input{}, nil, nil, fmt.Errorf("list pods of node %s: %w", opts.Node, err)
	}
	AddLocalPods(&in, list.Items)
	node, err := cs.CoreV1().Nodes().Get(ctx, opts.Node, metav1.GetOptions{})
	if err != nil {
		in.Warnings = append(in.Warnings, fmt.Sprintf("node %s: %v: what the kubelet's image and container GC could "+
			"free is unknown (pressure-agent's reclaim estimate reads the node's status.images)", opts.Node, err))
		return in, nil, list.Items, nil
	}
	in.Reclaimable = reclaimableOf(node, list.Items, in.Snapshot)
	if led, err := nodeLedger(node, policy.LoopConfig{}); err == nil {
		in.Ledger = policy.LedgerOf(led.Entries())
	} else {
		in.Warnings = append(in.Warnings, fmt.Sprintf("node %s: annotation %s: %v", opts.Node, loopbreaker.LedgerAnnotation, err))
	}
	return in, node, list.Items, nil
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// AddLocalPods ranks the active pods bound to the node with the usage observed locally (keyed by UID).
func AddLocalPods(in *explain.Input, pods []corev1.Pod) {
	for i := range pods {
		pod := &pods[i]
		if pod.Spec.NodeName != in.Node {
			continue
		}
		if !active(pod) {
			if pod.DeletionTimestamp != nil {
				in.TerminalPods = append(in.TerminalPods, kubeconv.PolicyPod(pod, in.Snapshot.Pods))
			}
			continue
		}
		c := kubeconv.Candidate(pod, in.Snapshot.Pods)
		if c.Stats == nil {
			in.Warnings = append(in.Warnings, fmt.Sprintf("pod %s/%s (uid %s): no pod cgroup found: the kubelet ranks "+
				"it before every pod with stats (stats-based keys)", pod.Namespace, pod.Name, pod.UID))
		}
		if !in.DisableLocalStorageCapacityIsolation && hasLocalStorageLimit(c) && !diskMeasured(c) {
			in.Warnings = append(in.Warnings, fmt.Sprintf("pod %s/%s (uid %s): it has an ephemeral-storage limit or an "+
				"emptyDir sizeLimit, but --local measured no disk usage of it (the pods directory under --kubelet-root-dir "+
				"was not readable): whether the kubelet evicts it for exceeding that limit is not predicted (explain the "+
				"node by name or a snapshot for that)",
				pod.Namespace, pod.Name, pod.UID))
		}
		in.Candidates = append(in.Candidates, c)
		noteDeletion(in, pod)
	}
	sort.SliceStable(in.Candidates, func(i, j int) bool { return candidateKey(in.Candidates[i]) < candidateKey(in.Candidates[j]) })
}

// diskMeasured reports whether some of c's local disk usage was measured (podfs: its local volumes or
// its containers' logs).
func diskMeasured(c rank.Candidate) bool {
	if c.Stats == nil {
		return false
	}
	for _, v := range c.Stats.Volumes {
		if v.UsedBytes != nil {
			return true
		}
	}
	for _, ctr := range c.Stats.Containers {
		if ctr.LogsUsed != nil {
			return true
		}
	}
	return false
}

// hasLocalStorageLimit reports whether the kubelet's local-storage eviction checks c: an emptyDir
// sizeLimit or an ephemeral-storage limit.
func hasLocalStorageLimit(c rank.Candidate) bool {
	if c.EphemeralStorageLimit != nil {
		return true // set when any container has one
	}
	for _, v := range c.Volumes {
		if v.Kind == rank.VolumeEmptyDir && v.SizeLimit != nil && v.SizeLimit.Value > 0 {
			return true
		}
	}
	return false
}

// localUnsupported is what --local answers on an OS other than Linux (local_other.go).
func localUnsupported(goos, goarch string) error {
	return fmt.Errorf("--local is only supported on linux (it reads /proc, cgroupfs and statfs of the node it runs on; "+
		"this is %s/%s): explain a node by name or a saved --snapshot DIR", goos, goarch)
}

// errLocalWithSnapshot rejects --local together with --snapshot.
var errLocalWithSnapshot = errors.New("--local and --snapshot exclude each other")
