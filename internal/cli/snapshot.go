package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// snapshotOptions are the flags of `kubectl pressure snapshot`.
type snapshotOptions struct {
	out      string
	output   string
	timeout  time.Duration
	noRedact bool
	local    localView
}

// SnapshotResult is what `kubectl pressure snapshot -o json|yaml` prints: what was saved where.
type SnapshotResult struct {
	Node string `json:"node"`
	Pods int    `json:"pods"`
	Dir  string `json:"dir"`
	// Files are the files written in Dir, in the order of the help.
	Files    []string `json:"files"`
	Redacted bool     `json:"redacted"`
}

func newSnapshotCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var o snapshotOptions
	cmd := &cobra.Command{
		Use:   "snapshot NODE --out DIR",
		Short: "Save what an eviction decision needs about a node, for offline explain and bug reports",
		Long: `Snapshot saves, in the formats the cluster itself serves:
  DIR/node.json            the v1.Node
  DIR/pods.json            the v1.PodList of the pods bound to NODE
  DIR/summary.json         the kubelet Summary API (/api/v1/nodes/NODE/proxy/stats/summary)
  DIR/kubelet-config.json  the kubelet's /configz (/api/v1/nodes/NODE/proxy/configz)
  DIR/cgroups.json         with --local: the node's memory signals, its pods cgroup and every pod's
                           cgroup read as pressure-agent reads them (run on NODE itself); simulate's
                           pressure-agent run reads these instead of the Summary's cache
Explain it later with "kubectl pressure explain --snapshot DIR".

The node and the pods are redacted to what the decision reads: no labels, no annotations but the
static/mirror pod markers, no images, commands, arguments, probes or environment (names or values),
no volume paths or names of configMaps and secrets, no names of Secret, claim or other volumes, of the
status only the phase, QoS class, start time and the kubelet's eviction evidence (reason and message of
an Evicted pod, DisruptionTarget); the node keeps only its capacity, allocatable, conditions, node info
and pressure's avoidance ledger annotation; the Summary keeps no volume stats but the local volumes' and
no claim names; the kubelet configuration loses staticPodURL, staticPodURLHeader and tracing; cgroups.json holds
only pod UIDs (kept, as in pods.json) and byte counts. --no-redact keeps everything. The
directory is created 0700 and the files written 0600.`,
		Example:           `  kubectl pressure snapshot node-1 --out ./node-1-snapshot`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNodes(flags),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, flags, streams, args[0])
		},
	}
	addKubeletTimeout(cmd, &o.timeout)
	addOutputFlag(cmd, &o.output, "the same as text")
	cmd.Flags().StringVar(&o.out, "out", "", "directory to write the snapshot files into (created 0700 if missing; files 0600)")
	cmd.Flags().BoolVar(&o.noRedact, "no-redact", false, "keep the node and pods as the apiserver serves them "+
		"(labels, annotations, images, commands, env values)")
	o.local.addFlags(cmd.Flags())
	return cmd
}

func (o snapshotOptions) run(cmd *cobra.Command, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams,
	node string) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.out == "" {
		return errors.New("--out DIR is required")
	}
	sampler, err := o.local.sampler()
	if err != nil {
		return err
	}
	cs, err := clientset(flags)
	if err != nil {
		return err
	}
	snap, err := FetchSnapshotTimeout(cmd.Context(), cs, node, o.timeout)
	if err != nil {
		return err
	}
	how := "as served (--no-redact)"
	if !o.noRedact {
		if err := snap.Redact(); err != nil {
			return err
		}
		how = "redacted to what the decision reads (--no-redact keeps everything)"
	}
	files := []string{FileNode, FilePods, FileSummary, FileKubeletConfig}
	if sampler != nil {
		if why := cgroupMismatch(snap.Raw[FileKubeletConfig], sampler.driver()); why != "" {
			fmt.Fprintf(streams.ErrOut, "snapshot %s: --local: warning: %s\n", node, why)
		}
		read := CgroupSamples{Layout: sampler.layout(), Samples: []CgroupSample{sampler.sample(time.Now().UTC())}}
		if err := snap.SetCgroups(read); err != nil {
			return err
		}
		files = append(files, FileCgroups)
	}
	if err := snap.WriteDir(o.out); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	if !isText(o.output) {
		return printObject(streams.Out, KindSnapshotResult, SnapshotResult{Node: snap.Node.Name, Pods: len(snap.Pods.Items),
			Dir: o.out, Files: files, Redacted: !o.noRedact}, o.output)
	}
	_, err = fmt.Fprintf(streams.Out, "saved node %s (%d pods) to %s (files 0600): %s; node and pods %s\n",
		snap.Node.Name, len(snap.Pods.Items), o.out, strings.Join(files, " "), how)
	return err
}
