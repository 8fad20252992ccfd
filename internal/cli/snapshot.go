package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func newSnapshotCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var out string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "snapshot NODE --out DIR",
		Short: "Save what an eviction decision needs about a node, for offline explain and bug reports",
		Long: `Snapshot saves, in the formats the cluster itself serves:
  DIR/node.json            the v1.Node
  DIR/pods.json            the v1.PodList of the pods bound to NODE
  DIR/summary.json         the kubelet Summary API (/api/v1/nodes/NODE/proxy/stats/summary)
  DIR/kubelet-config.json  the kubelet's /configz (/api/v1/nodes/NODE/proxy/configz)
Explain it later with "kubectl pressure explain --snapshot DIR".`,
		Example: `  kubectl pressure snapshot node-1 --out ./node-1-snapshot`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("--out DIR is required")
			}
			cs, err := clientset(flags)
			if err != nil {
				return err
			}
			snap, err := FetchSnapshotTimeout(cmd.Context(), cs, args[0], timeout)
			if err != nil {
				return err
			}
			if err := snap.WriteDir(out); err != nil {
				return fmt.Errorf("write snapshot: %w", err)
			}
			_, err = fmt.Fprintf(streams.Out, "saved node %s (%d pods) to %s: %s %s %s %s\n", snap.Node.Name,
				len(snap.Pods.Items), out, FileNode, FilePods, FileSummary, FileKubeletConfig)
			return err
		},
	}
	addKubeletTimeout(cmd, &timeout)
	cmd.Flags().StringVar(&out, "out", "", "directory to write the snapshot files into (created if missing)")
	return cmd
}
