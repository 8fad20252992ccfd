package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kube-pressure/pressure/internal/version"
)

// Run executes kubectl-pressure with args (without the program name) on the given streams.
func Run(ctx context.Context, streams genericiooptions.IOStreams, args []string) error {
	root := NewRootCommand(streams)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// NewRootCommand builds the command tree of kubectl-pressure.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:   "kubectl-pressure",
		Short: "Explain and predict node-pressure eviction",
		Long: `kubectl pressure shows why the kubelet evicts pods under node pressure: the node allocatable math,
the usage at which each eviction threshold fires, the margin now, and the predicted eviction order with the
reason for each place. It works on a live node or on a snapshot saved with "kubectl pressure snapshot".`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Get("kubectl-pressure").String(),
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetVersionTemplate("{{.Version}}\n")
	// Usage reads "kubectl pressure ...": kubectl runs the plugin as kubectl-pressure (krew convention).
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl pressure"}
	flags.AddFlags(root.PersistentFlags())
	addKlogFlags(root.PersistentFlags())
	root.AddCommand(newNodesCommand(flags, streams))
	root.AddCommand(newVersionCommand(streams))
	root.AddCommand(newExplainCommand(flags, streams))
	root.AddCommand(newSnapshotCommand(flags, streams))
	root.AddCommand(newWhyCommand(flags, streams))
	root.AddCommand(newRecordCommand(flags, streams))
	root.AddCommand(newSimulateCommand(streams))
	return root
}

func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			info := version.Get("kubectl-pressure")
			if isText(output) {
				_, err := fmt.Fprintln(streams.Out, info.String())
				return err
			}
			return printObject(streams.Out, KindVersion, info, output)
		},
	}
	addOutputFlag(cmd, &output, "the same as text")
	return cmd
}

// addKlogFlags adds kubectl's log flags: -v/--v (client-go's request logging at -v 6 and up) and
// --vmodule. -v is log verbosity, as in kubectl; the version is --version or `version`.
func addKlogFlags(fs *pflag.FlagSet) {
	gfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gfs)
	for _, name := range []string{"v", "vmodule"} {
		f := pflag.PFlagFromGoFlag(gfs.Lookup(name))
		if name == "v" {
			f.Shorthand = "v"
		}
		fs.AddFlag(f)
	}
}
