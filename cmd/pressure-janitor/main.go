// Command pressure-janitor deletes the terminal pods node-pressure evictions leave behind, after a
// TTL from the eviction time, keeping the evidence. See docs/janitor.md.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/daemon"
	"github.com/kube-pressure/pressure/internal/janitor"
)

const binary = "pressure-janitor"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", binary, err)
		os.Exit(1)
	}
}

func run(args []string) error { return command().Main(args) }

// command is pressure-janitor: the common daemon flags and the janitor's own, resolved into
// config.Config.
func command() daemon.Command {
	var o config.Overrides
	return daemon.Command{
		Binary: binary, Flags: &o.Flags, AddFlags: o.AddFlags,
		Run: daemon.Resolved(o.Resolve, func(ctx context.Context, cfg config.Config, log *slog.Logger) error {
			return janitor.RunWithOptions(ctx, cfg, janitor.Options{Logger: log, Profiling: o.Profiling})
		}),
	}
}
