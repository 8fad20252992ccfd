package cmdline_test

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/config/cmdline"
	"github.com/kube-pressure/pressure/internal/config/cmdline/cmdlinetest"
)

func TestFlagsRegisterExactlyTheCommonFlags(t *testing.T) {
	fs := pflag.NewFlagSet("d", pflag.ContinueOnError)
	var f cmdline.Flags
	f.AddFlags(fs, cmdline.Usage{Config: "config", DryRun: "dry run"})
	cmdlinetest.CheckCommonFlags(t, fs)
	if got, want := countFlags(fs), len(cmdlinetest.CommonFlags()); got != want {
		t.Errorf("%d flags registered, want the %d common ones", got, want)
	}
}

func TestFlagsParseIntoTheStruct(t *testing.T) {
	fs := pflag.NewFlagSet("d", pflag.ContinueOnError)
	var f cmdline.Flags
	f.AddFlags(fs, cmdline.Usage{})
	err := fs.Parse([]string{"--config", "c.yaml", "--kubeconfig", "k", "--dry-run", "--metrics-bind-address", "0",
		"--health-probe-bind-address", ":9", "--version", "--log-level", "debug", "-v", "4",
		"--profiling"})
	if err != nil {
		t.Fatal(err)
	}
	want := cmdline.Flags{ConfigFile: "c.yaml", Kubeconfig: "k", DryRun: true, MetricsBindAddress: "0",
		HealthProbeBindAddress: ":9", Version: true, Profiling: true}
	want.Logging.Level, want.Logging.Verbosity = "debug", 4
	if f != want {
		t.Errorf("parsed %+v, want %+v", f, want)
	}
}

func countFlags(fs *pflag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*pflag.Flag) { n++ })
	return n
}
