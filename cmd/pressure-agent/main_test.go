package main

import (
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/config/cmdline/cmdlinetest"
)

func TestBadConfigurationFailsBeforeTouchingAnything(t *testing.T) {
	t.Setenv("NODE_NAME", "")
	err := run([]string{"--kubeconfig", "/does/not/exist", "--metrics-bind-address", "nope"})
	if err == nil {
		t.Fatal("run accepted a configuration without a node name and with a bad address")
	}
	for _, want := range []string{"nodeName", "metricsBindAddress"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestUnknownFlagIsAnError(t *testing.T) {
	if err := run([]string{"--no-such-flag"}); err == nil {
		t.Error("run accepted an unknown flag")
	}
}

func TestVersionAndHelpExitCleanly(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"--help"}} {
		if err := run(args); err != nil {
			t.Errorf("run(%v) = %v, want nil", args, err)
		}
	}
}

func TestBadLogLevelIsAnErrorNamingTheFlag(t *testing.T) {
	err := run([]string{"--log-level", "loud"})
	if err == nil || !strings.Contains(err.Error(), `--log-level "loud"`) {
		t.Errorf("run(--log-level loud) = %v, want an error naming the flag and value", err)
	}
}

// TestTakesTheCommonDaemonFlags: the flags both daemons take keep their names and defaults (the other
// daemon's test checks the same list), and the daemon's own flags are still there.
func TestTakesTheCommonDaemonFlags(t *testing.T) {
	fs := command().FlagSet()
	cmdlinetest.CheckCommonFlags(t, fs)
	for _, name := range []string{"node-name", "kubelet-config"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
}
