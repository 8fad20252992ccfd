// Command pressure-agent keeps its node out of hard memory pressure: it evicts pods before the kubelet's
// own eviction and the kernel OOM killer have to, and says why. See docs/agent.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/logging"
	"github.com/kube-pressure/pressure/internal/version"
)

const binary = "pressure-agent"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", binary, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := pflag.NewFlagSet(binary, pflag.ContinueOnError)
	var o agent.Overrides
	o.AddFlags(fs)
	var lf logging.Flags
	lf.AddFlags(fs)
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
	return agent.RunWithOptions(ctx, cfg, agent.Options{Logger: log})
}
