package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

func resolve(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("pressure-agent", pflag.ContinueOnError)
	var o Overrides
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o.Resolve(fs)
}

func TestFlagsOverrideTheConfigFile(t *testing.T) {
	t.Setenv("NODE_NAME", "")
	cfg, err := resolve(t, "--config", "../config/agent/testdata/valid-full.yaml", "--node-name", "from-flag",
		"--dry-run", "--metrics-bind-address", "127.0.0.1:9999", "--kubelet-config", "/etc/kubelet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.Settings.Node, cfg.MetricsAddr, cfg.KubeletConfigFile}
	if d := cmp.Diff(got, []string{"from-flag", "127.0.0.1:9999", "/etc/kubelet.yaml"}); d != "" {
		t.Errorf("flag overrides (-got +want):\n%s", d)
	}
	if !cfg.Settings.DryRun || !cfg.Ladder.DryRun {
		t.Errorf("--dry-run not applied to the loop (%t) and the ladder (%t)", cfg.Settings.DryRun, cfg.Ladder.DryRun)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("resolved configuration is invalid: %v", err)
	}
}

func TestDefaultsWithoutAFile(t *testing.T) {
	t.Setenv("NODE_NAME", "node-from-env")
	cfg, err := resolve(t)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Settings.Node != "node-from-env" || cfg.Settings.Policy != policy.Pressure || cfg.Settings.SyncPeriod != 10*time.Second {
		t.Errorf("node %q policy %q sync %s: want node-from-env, pressure, 10s", cfg.Settings.Node, cfg.Settings.Policy, cfg.Settings.SyncPeriod)
	}
	if v := cfg.Settings.Headroom[signal.AllocatableMemoryAvailable]; v.String() != "256Mi" {
		t.Errorf("allocatable headroom %s, want 256Mi", v.String())
	}
	if cfg.Settings.KillLead != 0 || cfg.Ladder.AllowCgroupKill {
		t.Errorf("cgroup kill on by default (killLead %s, ladder %t); the file's default is off", cfg.Settings.KillLead, cfg.Ladder.AllowCgroupKill)
	}
}

func TestBadConfigurationIsRejectedWithEveryProblem(t *testing.T) {
	t.Setenv("NODE_NAME", "")
	_, err := resolve(t, "--metrics-bind-address", "nope", "--kubelet-config", "relative")
	if err == nil {
		t.Fatal("Resolve accepted a bad configuration")
	}
	for _, want := range []string{"nodeName", "metricsBindAddress", "kubeletConfigFile"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
