package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/test/chartinstall"
)

// contender is one way of watching the node.
type contender struct {
	name  string // A, A0, C
	label string
	agent bool // the chart-installed agent runs on the node
	// steadyOnly contenders are measured at steady state only (no ramps).
	steadyOnly bool
	// values are the chart values of this contender's agent beside the node's (chartinstall.NodeValues):
	// none for D, the chart's defaults. Placing a contender's agent runs helm upgrade --reset-values with
	// the node's values and these, so no contender inherits another's.
	values []string
	// memcg: the contender's agent must have the memcg notifier armed (checked when its pod starts).
	memcg bool
	// profile: the agent runs with --profiling and the steady window's CPU profile is saved (a
	// diagnosis, not a figure: the profiler's own cost is in its CPU).
	profile bool
}

func contenderByName(s string) (contender, bool) {
	switch s {
	case "D":
		return contender{name: "D", label: "pressure-agent installed by the chart with its default values, live (dryRun=false, the documented go-live step)", agent: true}, true
	case "D0":
		return contender{name: "D0", label: "D with agent.config.evictionLead=0s (thresholds only, no time-to-exhaustion)",
			agent: true, values: []string{"agent.config.evictionLead=0s"}}, true
	case "P100":
		return contender{name: "P100", label: "D with agent.config.notifiers.pollInterval=100ms (the adaptive poll's floor before it became 25ms)",
			agent: true, values: []string{"agent.config.notifiers.pollInterval=100ms"}}, true
	case "A":
		return contender{name: "A", label: "memcg notifier (root, non-recursive read-only mounts)", agent: true, memcg: true,
			values: append(chartinstall.MemcgRootValues(), "agent.config.podStatsMaxAge=1m")}, true
	case "A0":
		return contender{name: "A0", label: "memcg notifier with agent.config.podStatsMaxAge=0s (every pod's cgroups read on every sync, as before)",
			agent: true, memcg: true, steadyOnly: true, values: append(chartinstall.MemcgRootValues(), "agent.config.podStatsMaxAge=0s")}, true
	case "Dp":
		return contender{name: "Dp", label: "D with agent.extraArgs={--profiling}: its steady window's CPU profile is saved (a diagnosis of D's cost, not a chart-defaults figure)",
			agent: true, steadyOnly: true, profile: true, values: []string{"agent.extraArgs={--profiling}"}}, true
	case "C":
		return contender{name: "C", label: "kubelet alone (agent pod not on the node)"}, true
	}
	return contender{}, false
}

// The chart's release. The janitor is off: the benchmark is about the agent, and two janitor pods
// would only add memory to the pods cgroup.
const (
	release    = "pressure"
	releaseNS  = "pressure-system"
	imageTag   = "bench"
	offLabel   = "bench.kube-pressure.io/agent-off"
	agentReady = 2 * time.Minute
)

// agentOn makes sure the chart's agent pod of contender c runs on the node and returns it: when another
// contender's values are installed, helm upgrade --reset-values installs c's (a new agent pod). The first
// call after agentOff gets a new pod.
func (b *bench) agentOn(ctx context.Context, c contender) (*chartinstall.Agent, error) {
	if b.installed != c.name {
		values := append(append([]string(nil), b.values...), c.values...)
		if out, err := b.release().Reset(ctx, values...); err != nil {
			return nil, fmt.Errorf("contender %s: %w: %s", c.name, err, out)
		}
		logf("contender %s: helm upgrade --reset-values --set %s", c.name, strings.Join(values, " --set "))
		b.installed, b.agent = c.name, nil
	}
	if b.agent != nil {
		return b.agent, nil
	}
	if err := b.patchAgentNodeSelector(ctx, "null"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, agentReady)
	defer cancel()
	t0 := time.Now()
	a, err := chartinstall.WaitAgent(ctx, b.client, releaseNS, b.node.Name())
	if err != nil {
		return nil, err
	}
	logf("agent pod %s Ready %s after the DaemonSet selects the node again", a.Pod.Name, time.Since(t0).Round(time.Millisecond))
	text, err := a.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	armed := chartinstall.ArmedNotifiers(text)
	logf("agent pod %s notifiers armed: %v", a.Pod.Name, armed)
	if c.memcg && !armed["memcg"] {
		return nil, fmt.Errorf("agent pod %s: the memcg notifier is not armed (%v): contender %s measures the agent with it", a.Pod.Name, armed, c.name)
	}
	b.agent = a
	return a, nil
}

// agentOff takes the agent pod off the node (a nodeSelector no node has, so the DaemonSet deletes it;
// the agent removes its taint on SIGTERM) and waits until it is gone.
func (b *bench) agentOff(ctx context.Context) error {
	if err := b.patchAgentNodeSelector(ctx, `"true"`); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, agentReady)
	defer cancel()
	b.agent = nil
	return chartinstall.WaitNoAgent(ctx, b.client, releaseNS, b.node.Name())
}

// patchAgentNodeSelector sets (value "true") or removes (value null) offLabel in the agent
// DaemonSet's nodeSelector; the chart's own nodeSelector (kubernetes.io/os) stays.
func (b *bench) patchAgentNodeSelector(ctx context.Context, value string) error {
	list, err := b.client.AppsV1().DaemonSets(releaseNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=agent"})
	if err != nil {
		return fmt.Errorf("list agent daemonsets: %w", err)
	}
	if len(list.Items) != 1 {
		return fmt.Errorf("%d agent daemonsets in %s, want 1", len(list.Items), releaseNS)
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"nodeSelector":{%q:%s}}}}}`, offLabel, value)
	if _, err := b.client.AppsV1().DaemonSets(releaseNS).Patch(ctx, list.Items[0].Name, types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch daemonset %s: %w", list.Items[0].Name, err)
	}
	return nil
}

// latencyMetric is the agent's detection latency histogram (sum and count) at one moment.
type latencyMetric struct{ sum, count float64 }

func readLatency(ctx context.Context, a *chartinstall.Agent) (latencyMetric, error) {
	text, err := a.Metrics(ctx)
	if err != nil {
		return latencyMetric{}, err
	}
	sum, _ := chartinstall.MetricValue(text, "pressure_agent_detection_latency_seconds_sum")
	n, _ := chartinstall.MetricValue(text, "pressure_agent_detection_latency_seconds_count")
	return latencyMetric{sum: sum, count: n}, nil
}

// since formats the observations added after m0: "<n> ms" for exactly one, else "sum s/count".
func (m latencyMetric) since(m0 latencyMetric) string {
	ds, dn := m.sum-m0.sum, m.count-m0.count
	switch {
	case dn <= 0:
		return "-"
	case dn == 1:
		return fmt.Sprintf("%.0f ms", ds*1000)
	}
	return strings.TrimSpace(fmt.Sprintf("%.3fs/%.0f", ds, dn))
}
