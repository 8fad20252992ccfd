package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/config/cmdline"
	"github.com/kube-pressure/pressure/internal/logging"
	"github.com/kube-pressure/pressure/internal/version"
)

// Command is a daemon's main.
type Command struct {
	// Binary names the daemon (the FlagSet, --version).
	Binary string
	// Flags receives the common flags; AddFlags registers them and the daemon's own on the FlagSet.
	Flags    *cmdline.Flags
	AddFlags func(fs *pflag.FlagSet)
	// Run runs the daemon with the parsed flags until ctx ends (SIGINT or SIGTERM).
	Run func(ctx context.Context, fs *pflag.FlagSet, log *slog.Logger) error
	// Stdout and Stderr: nil means the process's.
	Stdout, Stderr io.Writer
}

// FlagSet returns a new FlagSet with every flag of the daemon registered.
func (c Command) FlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.Binary, pflag.ContinueOnError)
	c.AddFlags(fs)
	return fs
}

// Main parses args; --help and --version end it without error. Otherwise it sets up logging on
// Stderr and runs the daemon with a context that ends on SIGINT or SIGTERM.
func (c Command) Main(args []string) error {
	stdout, stderr := c.Stdout, c.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	fs := c.FlagSet()
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if c.Flags.Version {
		_, err := fmt.Fprintln(stdout, version.Get(c.Binary))
		return err
	}
	log, err := logging.Setup(stderr, c.Flags.Logging)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.Run(ctx, fs, log)
}

// Resolved is a Command.Run that first resolves the daemon's configuration from the parsed flags (a
// bad configuration is an error before anything runs), then runs the daemon with it.
func Resolved[C any](resolve func(*pflag.FlagSet) (C, error),
	run func(context.Context, C, *slog.Logger) error) func(context.Context, *pflag.FlagSet, *slog.Logger) error {
	return func(ctx context.Context, fs *pflag.FlagSet, log *slog.Logger) error {
		cfg, err := resolve(fs)
		if err != nil {
			return err
		}
		return run(ctx, cfg, log)
	}
}
