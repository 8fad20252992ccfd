// Command pressure-agent keeps its node out of hard memory pressure: it evicts pods before the kubelet's
// own eviction and the kernel OOM killer have to, and says why. See docs/agent.md.
//
// `pressure-agent cleanup` is the chart's pre-delete hook: it stops the agents and removes their taints
// (internal/uninstall).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/daemon"
	"github.com/kube-pressure/pressure/internal/uninstall"
)

const binary = "pressure-agent"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", binary, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == uninstall.Name {
		return uninstall.Main(binary, args[1:], os.Stdout, os.Stderr)
	}
	return command().Main(args)
}

// command is pressure-agent: the common daemon flags and the agent's own, resolved into agent.Config.
func command() daemon.Command {
	var o agent.Overrides
	return daemon.Command{
		Binary: binary, Flags: &o.Flags, AddFlags: o.AddFlags,
		Run: daemon.Resolved(o.Resolve, func(ctx context.Context, cfg agent.Config, log *slog.Logger) error {
			return agent.RunWithOptions(ctx, cfg, agent.Options{Logger: log, Profiling: o.Profiling})
		}),
	}
}
