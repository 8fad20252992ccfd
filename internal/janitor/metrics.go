package janitor

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the janitor's Prometheus collectors, registered on a registry the caller passes in.
type Metrics struct {
	deleted *prometheus.CounterVec // namespace, reason, dry_run
	skipped *prometheus.GaugeVec   // reason: pods skipped in the last pass
	pending *prometheus.GaugeVec   // namespace: pods waiting for their TTL after the last pass
	errors  *prometheus.CounterVec // namespace, operation
	passes  prometheus.Counter
	leader  prometheus.Gauge
}

// Operation label values of the errors metric.
const (
	OpDelete   = "delete"
	OpEvidence = "evidence"
	OpOwner    = "resolve_owner"
	OpMark     = "mark_first_seen"
)

// NewMetrics creates the collectors and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pressure_janitor_pods_deleted_total",
			Help: "Pods deleted (with dry_run=\"true\": that would have been deleted), by namespace and pod status reason.",
		}, []string{"namespace", "reason", "dry_run"}),
		skipped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pressure_janitor_pods_skipped",
			Help: "Pods the last pass did not delete, by skip reason (changed: precondition failed at delete).",
		}, []string{"reason"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pressure_janitor_pods_pending",
			Help: "Pods that match the policy and wait for their TTL, by namespace, after the last pass.",
		}, []string{"namespace"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pressure_janitor_errors_total",
			Help: "Failed API operations, by namespace and operation.",
		}, []string{"namespace", "operation"}),
		passes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pressure_janitor_passes_total",
			Help: "Selection passes run.",
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pressure_janitor_leader",
			Help: "1 while this replica holds the lease (or runs without leader election).",
		}),
	}
	for _, c := range []prometheus.Collector{m.deleted, m.skipped, m.pending, m.errors, m.passes, m.leader} {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(errors.New("register janitor metrics"), err)
		}
	}
	return m, nil
}

func (m *Metrics) observePass(actions []Action, changed int) {
	m.passes.Inc()
	m.skipped.Reset()
	m.pending.Reset()
	for i := range actions {
		a := &actions[i]
		switch a.Verb {
		case VerbSkip:
			m.skipped.WithLabelValues(string(a.Skip)).Inc()
		case VerbWait:
			m.pending.WithLabelValues(a.Pod.Namespace).Inc()
		}
	}
	if changed > 0 {
		m.skipped.WithLabelValues("changed").Add(float64(changed))
	}
}

func (m *Metrics) observeDeleted(p *PodInfo, dryRun bool) {
	m.deleted.WithLabelValues(p.Namespace, p.Reason, strconv.FormatBool(dryRun)).Inc()
}

func (m *Metrics) observeError(namespace, op string) {
	m.errors.WithLabelValues(namespace, op).Inc()
}
