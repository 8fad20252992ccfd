package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/kube-pressure/pressure/internal/signal"
)

// gatherAll returns the families of a Metrics with one series in every vector: each signal in its
// unit's gauges and one child of every other vector.
func gatherAll(t *testing.T) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range signal.All() {
		g, ok := m.signalGauges(sig)
		if !ok {
			t.Errorf("signal %s has no unit: it would not be exported", sig)
			continue
		}
		g.available.WithLabelValues(string(sig)).Set(1)
		g.threshold.WithLabelValues(string(sig)).Set(1)
		g.capacity.WithLabelValues(string(sig)).Set(1)
	}
	m.pressure.WithLabelValues(string(signal.MemoryPressure)).Set(1)
	m.evictions.WithLabelValues(string(signal.MemoryAvailable), "eviction-api", "evicted").Inc()
	m.syncs.WithLabelValues("periodic").Observe(0.1)
	m.statsAge.WithLabelValues(string(signal.MemoryAvailable)).Set(1)
	m.errors.WithLabelValues(stageRead).Inc()
	m.detection.Observe(0.1)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func TestSignalGaugesHaveOneUnitPerMetricName(t *testing.T) {
	want := map[signal.Signal]string{
		signal.MemoryAvailable: "bytes", signal.AllocatableMemoryAvailable: "bytes",
		signal.NodeFsAvailable: "bytes", signal.ImageFsAvailable: "bytes", signal.ContainerFsAvailable: "bytes",
		signal.NodeFsInodesFree: "inodes", signal.ImageFsInodesFree: "inodes", signal.ContainerFsInodesFree: "inodes",
		signal.PIDAvailable: "pids",
	}
	seen := map[string]int{}
	for _, mf := range gatherAll(t) {
		name := mf.GetName()
		if !strings.HasPrefix(name, "pressure_agent_signal_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			sig := signal.Signal(label(m, "signal"))
			if unit := want[sig]; !strings.HasSuffix(name, "_"+unit) {
				t.Errorf("%s{signal=%q}: the signal is measured in %q, the name says otherwise", name, sig, unit)
			}
			seen[string(sig)+" "+strings.TrimSuffix(name, "_"+want[sig])]++
		}
	}
	for sig := range want {
		for _, base := range []string{"available", "threshold", "capacity"} {
			if n := seen[string(sig)+" pressure_agent_signal_"+base]; n != 1 {
				t.Errorf("signal %s: %d series of pressure_agent_signal_%s_<unit>, want 1", sig, n, base)
			}
		}
	}
}

func TestAgentMetricsPassPromlintAndCarryTheNodeLabel(t *testing.T) {
	mfs := gatherAll(t)
	problems, err := testutil.GatherAndLint(prometheus.Gatherers{prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return mfs, nil })})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if label(m, "node") != "node-a" {
				t.Errorf("%s: series %v has no node=\"node-a\" label", mf.GetName(), m.GetLabel())
			}
		}
	}
}

// TestEveryAgentMetricIsDocumented keeps docs/agent.md's metrics table complete.
func TestEveryAgentMetricIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agent.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range gatherAll(t) {
		if !strings.Contains(string(doc), "`"+mf.GetName()+"`") {
			t.Errorf("docs/agent.md does not list %s", mf.GetName())
		}
	}
}
