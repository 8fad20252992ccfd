package e2e

// The chart-installed agent (issue 11, "measure as deployed"): deploy/helm/pressure installed from
// images built from this checkout onto the package node, as users install it (a DaemonSet), with the
// chart's defaults and only what the node and the test need.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/chartinstall"
)

// The test release. Its own name and namespace: agent_loop_test.go creates the avoidance admission
// policy of a release "pressure" itself, which helm would refuse to adopt.
const (
	chartRelease   = "pressure-e2e"
	chartNamespace = "pressure-e2e"
	chartTag       = "e2e"
)

// installAgent installs the chart's agent on the package node (chartinstall.ForTest: janitor off,
// uninstalled when t ends) with set beside the defaults and returns its Ready pod, whose notifiers must
// be armed.
func installAgent(t *testing.T, e *env, set ...string) *chartinstall.Agent {
	t.Helper()
	a := chartinstall.ForTest{Name: chartRelease, Namespace: chartNamespace, Tag: chartTag, Node: e.node,
		ControlPlane: e.cp, Client: e.client}.Install(t, set...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	requireArmed(ctx, t, a, "memcg", "psi", "poll")
	return a
}

// requireArmed fails the test unless each notifier is armed in the installed agent (its
// pressure_agent_notifier_armed metric): as the chart installs it on this cgroup v1 node, least
// privilege must still arm them.
func requireArmed(ctx context.Context, t *testing.T, a *chartinstall.Agent, notifiers ...string) {
	t.Helper()
	text, err := a.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	armed := chartinstall.ArmedNotifiers(text)
	for _, n := range notifiers {
		if !armed[n] {
			lines := a.LogLines(ctx, "notifiers")
			t.Fatalf("notifier %s is not armed in the chart-installed agent (armed: %v); its start log:\n%s",
				n, armed, strings.Join(lines, "\n"))
		}
	}
	t.Logf("notifiers armed in the chart-installed agent: %v", armed)
}

// inNamespace keeps the lines that name namespace ns (the agent's log covers every subtest).
func inNamespace(lines []string, ns string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, `"`+ns+`/`) {
			out = append(out, l)
		}
	}
	return out
}
