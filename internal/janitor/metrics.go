package janitor

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the janitor's Prometheus collectors, registered on a registry the caller passes in.
type Metrics struct {
	deleted    *prometheus.CounterVec // namespace, reason, dry_run
	errors     *prometheus.CounterVec // namespace, operation
	notApplied *prometheus.CounterVec // result: not_found (404), conflict (409)
	passes     prometheus.Counter
	leader     prometheus.Gauge
	census     atomic.Pointer[func() Census] // the leading controller's, nil on a standby
}

// Census counts the cached pods by verdict, at scrape time.
type Census struct {
	Skipped map[SkipReason]int
	Pending map[string]int // by namespace
}

// Results of a delete that did not delete, for pressure_janitor_delete_not_applied_total.
const (
	ResultNotFound = "not_found"
	ResultConflict = "conflict"
)

// censusCollector reports the leading controller's Census through two gauge vectors, reset on
// every scrape.
type censusCollector struct {
	m                *Metrics
	mu               sync.Mutex
	skipped, pending *prometheus.GaugeVec
}

func newCensusCollector(m *Metrics) *censusCollector {
	return &censusCollector{m: m,
		skipped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pressure_janitor_pods_skipped",
			Help: "Cached pods that are not deleted, by skip reason, at scrape time.",
		}, []string{"reason"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pressure_janitor_pods_pending",
			Help: "Cached pods that match the policy and wait for their TTL, by namespace, at scrape time.",
		}, []string{"namespace"}),
	}
}

func (c *censusCollector) Describe(ch chan<- *prometheus.Desc) {
	c.skipped.Describe(ch)
	c.pending.Describe(ch)
}

func (c *censusCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.census.Load()
	if f == nil {
		return
	}
	cs := (*f)()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skipped.Reset()
	c.pending.Reset()
	for reason, n := range cs.Skipped {
		c.skipped.WithLabelValues(string(reason)).Set(float64(n))
	}
	for ns, n := range cs.Pending {
		c.pending.WithLabelValues(ns).Set(float64(n))
	}
	c.skipped.Collect(ch)
	c.pending.Collect(ch)
}

func (m *Metrics) setCensus(f func() Census) {
	if f == nil {
		m.census.Store(nil)
		return
	}
	m.census.Store(&f)
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
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pressure_janitor_errors_total",
			Help: "Failed API operations, by namespace and operation.",
		}, []string{"namespace", "operation"}),
		notApplied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pressure_janitor_delete_not_applied_total",
			Help: "Deletes the API server did not apply: not_found (404, already gone), conflict (409, the pod changed since it was selected).",
		}, []string{"result"}),
		passes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pressure_janitor_passes_total",
			Help: "Work items processed (decisions and deletions).",
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pressure_janitor_leader",
			Help: "1 while this replica holds the lease (or runs without leader election).",
		}),
	}
	for _, c := range []prometheus.Collector{m.deleted, m.errors, m.notApplied, m.passes, m.leader, newCensusCollector(m)} {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(errors.New("register janitor metrics"), err)
		}
	}
	return m, nil
}

func (m *Metrics) observeNotApplied(result string) {
	m.notApplied.WithLabelValues(result).Inc()
}

func (m *Metrics) observeDeleted(p *PodInfo, dryRun bool) {
	m.deleted.WithLabelValues(p.Namespace, p.Reason, strconv.FormatBool(dryRun)).Inc()
}

func (m *Metrics) observeError(namespace, op string) {
	m.errors.WithLabelValues(namespace, op).Inc()
}
