package agent

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kube-pressure/pressure/internal/signal"
)

// Naming rule of the agent's metrics (Prometheus conventions, docs/agent.md#metrics): the prefix
// pressure_agent_, then what is measured, then its base unit as a suffix (_seconds, _bytes, _inodes,
// _pids) and _total for counters. One metric name has one unit: the per-signal gauges are split by the
// unit of the signal (memory and filesystem bytes, inodes, pids), never bytes and inodes under one name.
// Every series carries the label node (the agent's node), so alerts need no scrape relabelling.

// signalUnits is the unit suffix of each resource a signal measures.
var signalUnits = map[signal.Resource]string{
	signal.ResourceMemory:           "bytes",
	signal.ResourceEphemeralStorage: "bytes",
	signal.ResourceInodes:           "inodes",
	signal.ResourcePIDs:             "pids",
}

// signalGaugeNames are the names of the per-signal gauges, one set per unit.
var signalGaugeNames = []struct{ unit, available, threshold, capacity string }{
	{"bytes", "pressure_agent_signal_available_bytes", "pressure_agent_signal_threshold_bytes", "pressure_agent_signal_capacity_bytes"},
	{"inodes", "pressure_agent_signal_available_inodes", "pressure_agent_signal_threshold_inodes", "pressure_agent_signal_capacity_inodes"},
	{"pids", "pressure_agent_signal_available_pids", "pressure_agent_signal_threshold_pids", "pressure_agent_signal_capacity_pids"},
}

// signalGauges are the per-signal gauges of one unit.
type signalGauges struct {
	available *prometheus.GaugeVec // signal
	threshold *prometheus.GaugeVec // signal (our highest resolved threshold on the signal)
	capacity  *prometheus.GaugeVec // signal
}

// Metrics are the agent's Prometheus collectors, registered on a registry the caller passes in.
type Metrics struct {
	signals    map[string]signalGauges  // by unit
	pressure   *prometheus.GaugeVec     // condition
	evictions  *prometheus.CounterVec   // signal, path, outcome
	detection  prometheus.Histogram     // crossing to eviction request
	syncs      *prometheus.HistogramVec // trigger
	statsAge   *prometheus.GaugeVec     // signal
	loops      prometheus.Counter
	errors     *prometheus.CounterVec // stage
	taint      prometheus.Gauge
	avoidances prometheus.Gauge
	lastSyncTS prometheus.Gauge
	armed      *prometheus.GaugeVec // notifier
	// podStatsReads counts the syncs by how they got the pods' stats: why they were read, or reused.
	podStatsReads *prometheus.CounterVec // reason
}

// Error stages of pressure_agent_errors_total.
const (
	stageRead    = "read_node"
	stagePods    = "list_pods"
	stageEvict   = "evict"
	stageLedger  = "ledger"
	stageTaint   = "taint"
	stageNotify  = "notifier"
	stageLoop    = "loop_detection"
	stageKubelet = "kubelet_config"
	stageKill    = "cgroup_kill"
	stageReclaim = "reclaim"
	stageDecided = "decide"
	// stageDiskWalk counts the pods whose disk walk stopped at a limit (podfs.Limits): their usage
	// is a lower bound.
	stageDiskWalk = "pod_disk_walk"
)

// latencyBuckets span 1 ms to 30 s: notifier-driven detection is milliseconds, a 10 s poll is seconds.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30}

// NewMetrics creates the collectors and registers them on reg; a non-empty node becomes the constant
// label node of every series.
func NewMetrics(reg prometheus.Registerer, node string) (*Metrics, error) {
	if node != "" {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"node": node}, reg)
	}
	m := &Metrics{
		signals:  map[string]signalGauges{},
		pressure: gauge("pressure_agent_node_pressure", "1 while the node condition is reported by the agent's thresholds.", "condition"),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pressure_agent_evictions_total",
			Help: "Eviction requests, by signal, path (eviction-api, delete, cgroup-kill, dry-run) and outcome.",
		}, []string{"signal", "path", "outcome"}),
		detection: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pressure_agent_detection_latency_seconds",
			Help:    "Time from the estimated threshold crossing to the first eviction request of the episode.",
			Buckets: latencyBuckets,
		}),
		syncs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pressure_agent_sync_duration_seconds",
			Help:    "Duration of one sync, by trigger (periodic, notify, start).",
			Buckets: latencyBuckets,
		}, []string{"trigger"}),
		statsAge: gauge("pressure_agent_stats_age_seconds", "Age of each signal's observation when the sync decided.", "signal"),
		loops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pressure_agent_eviction_loops_total",
			Help: "Eviction loops: a replacement of a pod evicted from this node came back and was evicted again.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pressure_agent_errors_total",
			Help: "Failures, by stage (read_node, list_pods, evict, ledger, taint, notifier, loop_detection, cgroup_kill, decide, kubelet_config, pod_disk_walk: a walk of a pod's disk usage stopped at its limit).",
		}, []string{"stage"}),
		taint: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pressure_agent_taint", Help: "1 while the node carries the agent's NoSchedule taint.",
		}),
		avoidances: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pressure_agent_avoidances", Help: "Workloads whose new pods avoid this node after an eviction.",
		}),
		lastSyncTS: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pressure_agent_last_sync_timestamp_seconds", Help: "Unix time of the last completed sync.",
		}),
		podStatsReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pressure_agent_pod_stats_reads_total",
			Help: "Syncs by how they got every pod's stats: read, and why (wake-up, first read, older than the max age, pressure or eviction under way, memory stall, near a threshold, every sync), or reused (far from every threshold).",
		}, []string{"reason"}),
		armed: gauge("pressure_agent_notifier_armed", "1 while a notifier enabled on this host is armed (memcg, psi, memory.events, poll), 0 when it could not be armed or stopped.", "notifier"),
	}
	cs := []prometheus.Collector{m.pressure, m.evictions, m.detection,
		m.syncs, m.statsAge, m.loops, m.errors, m.taint, m.avoidances, m.lastSyncTS, m.armed, m.podStatsReads}
	for _, n := range signalGaugeNames {
		g := signalGauges{
			available: gauge(n.available, "Available "+n.unit+" of each observed signal.", "signal"),
			threshold: gauge(n.threshold, "The agent's threshold in "+n.unit+" on each signal, resolved against capacity (the highest, crossed first).", "signal"),
			capacity:  gauge(n.capacity, "Capacity in "+n.unit+" of each observed signal.", "signal"),
		}
		m.signals[n.unit] = g
		cs = append(cs, g.available, g.threshold, g.capacity)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(errors.New("register agent metrics"), err)
		}
	}
	return m, nil
}

func gauge(name, help, label string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{label})
}

// setArmed sets pressure_agent_notifier_armed{notifier=name}.
func (m *Metrics) setArmed(name string, ok bool) {
	v := 0.0
	if ok {
		v = 1
	}
	m.armed.WithLabelValues(name).Set(v)
}

// signalGauges returns the gauges of sig's unit; false for a signal of no known unit.
func (m *Metrics) signalGauges(sig signal.Signal) (signalGauges, bool) {
	g, ok := m.signals[signalUnits[sig.Resource()]]
	return g, ok
}
