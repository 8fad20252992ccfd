// Command pressure-janitor deletes the terminal pods node-pressure evictions leave behind, after a
// TTL from the eviction time, keeping the evidence. See docs/janitor.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/internal/logging"
	"github.com/kube-pressure/pressure/internal/version"
)

const binary = "pressure-janitor"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", binary, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := pflag.NewFlagSet(binary, pflag.ContinueOnError)
	var o config.Overrides
	o.AddFlags(fs)
	var lf logging.Flags
	lf.AddFlags(fs)
	profiling := fs.Bool("profiling", false, "serve Go's /debug/pprof/ on the metrics address (memory and CPU profiles)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.Version {
		fmt.Println(version.Get(binary))
		return nil
	}
	log, err := logging.Setup(os.Stderr, lf)
	if err != nil {
		return err
	}
	cfg, err := o.Resolve(fs)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return janitor.RunWithOptions(ctx, cfg, janitor.Options{Logger: log, Profiling: *profiling})
}
