package agent

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the agent's Prometheus collectors, registered on a registry the caller passes in.
type Metrics struct {
	available  *prometheus.GaugeVec     // signal
	threshold  *prometheus.GaugeVec     // signal (our highest resolved threshold on the signal)
	capacity   *prometheus.GaugeVec     // signal
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
	stageKill    = "cgroup_kill"
	stageDecided = "decide"
)

// latencyBuckets span 1 ms to 30 s: notifier-driven detection is milliseconds, a 10 s poll is seconds.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30}

// NewMetrics creates the collectors and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		available: gauge("pressure_agent_signal_available", "Available amount of each observed signal (bytes, inodes or pids).", "signal"),
		threshold: gauge("pressure_agent_signal_threshold", "The agent.s threshold on each signal resolved against capacity (the highest, crossed first).", "signal"),
		capacity:  gauge("pressure_agent_signal_capacity", "Capacity of each observed signal.", "signal"),
		pressure:  gauge("pressure_agent_node_pressure", "1 while the node condition is reported by the agent's thresholds.", "condition"),
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
			Help: "Failures, by stage (read_node, list_pods, evict, ledger, taint, notifier, loop_detection, cgroup_kill, decide).",
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
	}
	cs := []prometheus.Collector{m.available, m.threshold, m.capacity, m.pressure, m.evictions, m.detection,
		m.syncs, m.statsAge, m.loops, m.errors, m.taint, m.avoidances, m.lastSyncTS}
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
