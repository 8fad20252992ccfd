package soak

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/chartinstall"
)

// sampleEvery is the sampler's period.
const sampleEvery = 3 * time.Second

// sampler records, every sampleEvery over the whole run, the agent's and the janitor's pods (restarts),
// their RSS and goroutines (their /metrics through the API server's pod proxy), the ledger's size, and
// the current episode's PodDisruptionBudget.
type sampler struct {
	c      *soakCluster
	mu     sync.Mutex
	series map[string]*Series
	pods   []PodSample
	pdb    []PDBSample
	ledger []LedgerSample
	// pdbNS is the namespace of the current episode's PDB ("": none).
	pdbNS string
}

func newSampler(c *soakCluster) *sampler { return &sampler{c: c, series: map[string]*Series{}} }

// run samples until ctx ends.
func (s *sampler) run(ctx context.Context) {
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(sampleEvery):
		}
	}
}

func (s *sampler) setPDBNamespace(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pdbNS = ns
}

func (s *sampler) sample(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	now := time.Now()
	if pods, err := s.c.client.CoreV1().Pods(releaseNS).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range pods.Items {
			s.samplePod(ctx, now, &pods.Items[i])
		}
	}
	if n, err := s.c.client.CoreV1().Nodes().Get(ctx, s.c.node.Name(), metav1.GetOptions{}); err == nil {
		l := ReadLedgerSample(now, n.Annotations[loopbreaker.LedgerAnnotation])
		s.add("node ledger bytes", 1024, true, now, float64(l.Bytes))
		s.mu.Lock()
		s.ledger = append(s.ledger, l)
		s.mu.Unlock()
	}
	s.mu.Lock()
	ns := s.pdbNS
	s.mu.Unlock()
	if ns == "" {
		return
	}
	get := func() (int32, error) {
		b, err := s.c.client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "pdb", metav1.GetOptions{})
		if err != nil {
			return 0, err
		}
		return b.Status.DisruptionsAllowed, nil
	}
	if p, err := readPDB(ns, "pdb", get, time.Now); err == nil {
		s.mu.Lock()
		s.pdb = append(s.pdb, p)
		s.mu.Unlock()
	}
}

// readPDB reads a budget's status with get and stamps it with the time the read returned (clock after
// get): the state it holds is no older than that, and PDBKept judges an eviction by the samples stamped
// before it. Stamped with the sampling round's start instead, a read that returned after an eviction
// (the round first reads every agent's and janitor's metrics) showed the budget the eviction had just
// used up as if it were the budget before it: a false violation (soak seed 20261205, episode 16 of the
// fourth run).
func readPDB(ns, name string, get func() (int32, error), clock func() time.Time) (PDBSample, error) {
	allowed, err := get()
	if err != nil {
		return PDBSample{}, err
	}
	return PDBSample{At: clock(), Namespace: ns, Name: name, DisruptionsAllowed: allowed}, nil
}

func (s *sampler) samplePod(ctx context.Context, now time.Time, p *corev1.Pod) {
	comp := p.Labels["app.kubernetes.io/component"]
	if comp != "agent" && comp != "janitor" {
		return
	}
	var restarts int32
	for _, cs := range p.Status.ContainerStatuses {
		restarts += cs.RestartCount
	}
	s.mu.Lock()
	s.pods = append(s.pods, PodSample{Component: comp, UID: string(p.UID), Restarts: restarts})
	s.mu.Unlock()
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return
	}
	port := 0
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == "metrics" {
				port = int(cp.ContainerPort)
			}
		}
	}
	if port == 0 {
		return
	}
	b, err := s.c.client.CoreV1().Pods(p.Namespace).ProxyGet("http", p.Name, strconv.Itoa(port), "/metrics", nil).DoRaw(ctx)
	if err != nil {
		return
	}
	text := string(b)
	id := seriesID(comp, p.Name, restarts, text)
	if v, ok := chartinstall.MetricValue(text, "process_resident_memory_bytes"); ok {
		s.add(id+" rss bytes", 8<<20, false, now, v)
	}
	if v, ok := chartinstall.MetricValue(text, "go_goroutines"); ok {
		s.add(id+" goroutines", 5, false, now, v)
	}
}

// seriesID names the series of one process: a restarted container is a new process, its own series;
// a janitor replica's series is also split by its role (pressure_janitor_leader): the leader runs the
// controller and its informers, about 18 goroutines more than a standby, and a standby that takes the
// lease half-way through the run would otherwise read as a leak (soak seed 20261205, third run).
func seriesID(comp, pod string, restarts int32, metrics string) string {
	id := comp + "/" + pod + "#" + strconv.Itoa(int(restarts))
	if comp != "janitor" {
		return id
	}
	if v, ok := chartinstall.MetricValue(metrics, "pressure_janitor_leader"); ok && v == 1 {
		return id + " leader"
	}
	return id + " standby"
}

// add adds a sample to the series name, created with floor (and plotOnly: Series.PlotOnly).
func (s *sampler) add(name string, floor float64, plotOnly bool, at time.Time, v float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sr := s.series[name]
	if sr == nil {
		sr = &Series{Name: name, Floor: floor, PlotOnly: plotOnly}
		s.series[name] = sr
	}
	sr.Points = append(sr.Points, Point{At: at, V: v})
}

// ledgerSamples returns a copy of the ledger's samples, in time order.
func (s *sampler) ledgerSamples() []LedgerSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ledger)
}

// snapshot returns copies of what was sampled, the series sorted by name.
func (s *sampler) snapshot() (series []Series, pods []PodSample, pdb []PDBSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sr := range s.series {
		series = append(series, Series{Name: sr.Name, Floor: sr.Floor, PlotOnly: sr.PlotOnly, Points: slices.Clone(sr.Points)})
	}
	slices.SortFunc(series, func(a, b Series) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return series, slices.Clone(s.pods), slices.Clone(s.pdb)
}
