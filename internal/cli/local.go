package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// LocalSource is the Source of a report built from the node this command runs on.
const LocalSource = "local"

// Defaults of the --local flags.
const (
	DefaultKubeletRootDir = "/var/lib/kubelet"
	DefaultRuntimeRoot    = "/var/lib/containerd"
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
}

// localFlags are the flags of `explain --local`.
type localFlags struct {
	enabled bool
	opts    LocalOptions
}

func (l *localFlags) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&l.enabled, "local", false, "explain the node this command runs on from /proc, the cgroup filesystem and statfs; no cluster needed")
	fs.StringVar(&l.opts.KubeletConfig, "kubelet-config", "", "with --local: the kubelet's KubeletConfiguration file (default: the kubelet's defaults)")
	fs.StringVar(&l.opts.CgroupRoot, "cgroup-root", cgroupfs.DefaultRoot, "with --local: where the cgroup filesystems are mounted")
	fs.StringVar(&l.opts.ProcRoot, "proc-root", procfs.DefaultRoot, "with --local: where procfs is mounted")
	fs.StringVar(&l.opts.KubeletRootDir, "kubelet-root-dir", DefaultKubeletRootDir, "with --local: the kubelet's --root-dir (nodefs)")
	fs.StringVar(&l.opts.RuntimeRoot, "runtime-root", DefaultRuntimeRoot, "with --local: the container runtime's root (imagefs)")
	fs.StringVar(&l.opts.Node, "node-name", "", "with --local: the node's name (default: the hostname); with a kubeconfig, its pods are ranked too")
}

// input builds the local report's input. Pods are listed only when --node-name and a kubeconfig
// (--kubeconfig or $KUBECONFIG) are both given.
func (l *localFlags) input(ctx context.Context, flags *genericclioptions.ConfigFlags, args []string, now time.Time) (explain.Input, error) {
	if len(args) != 0 {
		return explain.Input{}, fmt.Errorf("--local explains the node it runs on: give its name with --node-name, not %q", args[0])
	}
	opts := l.opts
	withPods := opts.Node != "" && (ptrString(flags.KubeConfig) != "" || os.Getenv("KUBECONFIG") != "")
	if opts.Node == "" {
		host, err := os.Hostname()
		if err != nil {
			return explain.Input{}, fmt.Errorf("--local: node name: %w", err)
		}
		opts.Node = host
	}
	in, err := LocalInput(opts, now)
	if err != nil || !withPods {
		return in, err
	}
	cs, err := clientset(flags)
	if err != nil {
		return explain.Input{}, err
	}
	list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", opts.Node).String()})
	if err != nil {
		return explain.Input{}, fmt.Errorf("list pods of node %s: %w", opts.Node, err)
	}
	AddLocalPods(&in, list.Items)
	return in, nil
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// LocalInput reads the node this runs on through internal/source and returns the explain input: live
// signals stamped with now, thresholds from opts.KubeletConfig or the kubelet's defaults, and capacity
// for the allocatable math from MemTotal (memory), statfs of the kubelet root dir (ephemeral-storage)
// and min(pid_max, threads-max) (pid). Signals that cannot be read become warnings, never zeros; only
// an unreadable or invalid kubelet config is an error.
func LocalInput(opts LocalOptions, now time.Time) (explain.Input, error) {
	cfg, err := localConfig(opts.KubeletConfig)
	if err != nil {
		return explain.Input{}, err
	}
	in := explain.Input{Node: opts.Node, Source: LocalSource, Now: now, Config: cfg, Capacity: map[string]int64{}}
	proc := procfs.NewReader(opts.ProcRoot)
	node := &source.Node{Proc: proc}
	if layout, err := (cgroupfs.Detector{Root: opts.CgroupRoot}).Detect(); err != nil {
		in.Warnings = append(in.Warnings, fmt.Sprintf("memory.available, allocatableMemory.available and pod "+
			"usage are not observed: %v", err))
	} else {
		node.Cgroup = &cgroupfs.Reader{Layout: layout}
	}
	nodefs := isDir(opts.KubeletRootDir)
	if nodefs {
		node.Disk = &statfs.Reader{NodefsPath: opts.KubeletRootDir, ImagefsPath: existingDir(opts.RuntimeRoot), Statfser: statfs.Unix{}}
	} else {
		in.Warnings = append(in.Warnings, fmt.Sprintf("nodefs is not observed: kubelet root dir %s does not exist "+
			"(set --kubelet-root-dir)", opts.KubeletRootDir))
	}
	if !isDir(opts.RuntimeRoot) {
		in.Warnings = append(in.Warnings, fmt.Sprintf("imagefs is not observed: runtime root %s does not exist "+
			"(set --runtime-root)", opts.RuntimeRoot))
	}
	snap, err := node.Snapshot(now)
	in.Warnings = append(in.Warnings, errorLines(err)...)
	if !nodefs && isDir(opts.RuntimeRoot) {
		in.Warnings = append(in.Warnings, imagefsOnly(&snap, opts.RuntimeRoot, now)...)
	}
	in.Snapshot = snap
	if total, err := proc.MemTotal(); err == nil {
		in.Capacity[threshold.ResourceMemory] = int64(total)
	}
	if o, ok := snap.Observations[signal.NodeFsAvailable]; ok {
		in.Capacity[threshold.ResourceEphemeralStorage] = o.Capacity
	}
	if o, ok := snap.Observations[signal.PIDAvailable]; ok {
		in.Capacity[threshold.ResourcePID] = o.Capacity
	}
	return in, nil
}

// localConfig parses the eviction configuration of file, or the kubelet's defaults when file is "".
func localConfig(file string) (threshold.Config, error) {
	var tin threshold.Input
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return threshold.Config{}, fmt.Errorf("--kubelet-config: %w", err)
		}
		defer f.Close()
		kc, err := kubeconv.LoadKubeletConfig(f, file)
		if err != nil {
			return threshold.Config{}, err
		}
		tin = kc.ThresholdInput()
	}
	cfg, err := threshold.ParseConfig(tin)
	if err != nil {
		name := file
		if name == "" {
			name = "kubelet defaults"
		}
		return threshold.Config{}, &FileError{File: name, Err: err}
	}
	return cfg, nil
}

// imagefsOnly observes imagefs and containerfs when nodefs cannot be: the layout is then unknown and
// reported as shared, the kubelet's default.
func imagefsOnly(snap *signal.Snapshot, runtimeRoot string, now time.Time) []string {
	res, err := (&statfs.Reader{NodefsPath: runtimeRoot, ImagefsPath: runtimeRoot, Statfser: statfs.Unix{}}).Observe(now)
	if err != nil {
		return errorLines(err)
	}
	for _, sig := range []signal.Signal{signal.ImageFsAvailable, signal.ImageFsInodesFree,
		signal.ContainerFsAvailable, signal.ContainerFsInodesFree} {
		if o, ok := res.Observations[sig]; ok {
			snap.Observations[sig] = o
		}
	}
	return []string{"filesystem layout unknown without nodefs: imagefs is assumed to share it"}
}

// AddLocalPods ranks the active pods bound to the node with the usage observed locally (keyed by UID).
func AddLocalPods(in *explain.Input, pods []corev1.Pod) {
	for i := range pods {
		pod := &pods[i]
		if pod.Spec.NodeName != in.Node || !active(pod) {
			continue
		}
		c := kubeconv.Candidate(pod, in.Snapshot.Pods)
		if c.Stats == nil {
			in.Warnings = append(in.Warnings, fmt.Sprintf("pod %s/%s (uid %s): no pod cgroup found: the kubelet ranks "+
				"it before every pod with stats (stats-based keys)", pod.Namespace, pod.Name, pod.UID))
		}
		in.Candidates = append(in.Candidates, c)
	}
	sort.SliceStable(in.Candidates, func(i, j int) bool { return candidateKey(in.Candidates[i]) < candidateKey(in.Candidates[j]) })
}

// errorLines splits a joined error into one warning per line, sorted (the readers' errors come
// from map iteration).
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func existingDir(p string) string {
	if isDir(p) {
		return p
	}
	return ""
}

// errLocalWithSnapshot rejects --local together with --snapshot.
var errLocalWithSnapshot = errors.New("--local and --snapshot exclude each other")
