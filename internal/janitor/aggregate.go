package janitor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/evidence"
)

// flushTick is how often the aggregator looks for closed windows; writeTimeout bounds one Event
// write (also at shutdown, when the controller's context is already cancelled).
const (
	flushTick    = time.Second
	writeTimeout = 5 * time.Second
)

// aggregator collects the deletion records of each owner for a window (DefaultEventWindow) and
// writes one Event per owner and window, with the count. A bare pod is its own owner and its
// Event is written at once.
type aggregator struct {
	client  kubernetes.Interface
	clock   clock.WithTicker
	log     *slog.Logger
	metrics *Metrics
	window  time.Duration
	dryRun  bool // every window is a dry run's report

	mu   sync.Mutex
	open map[string]*evidence.Window // by namespace/owner UID
}

func newAggregator(c kubernetes.Interface, clk clock.WithTicker, log *slog.Logger, m *Metrics, window time.Duration, dryRun bool) *aggregator {
	return &aggregator{client: c, clock: clk, log: log, metrics: m, window: window, dryRun: dryRun, open: map[string]*evidence.Window{}}
}

// add records a deleted pod (in a dry run: one that would have been deleted). owner is the resolved
// workload, zero for a bare pod.
func (g *aggregator) add(rec evidence.Record, owner OwnerRef, p *PodInfo) {
	now := g.clock.Now()
	if owner.UID == "" {
		w := evidence.NewWindow(p.Namespace, OwnerRef{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}, now)
		w.DryRun = g.dryRun
		w.Add(rec, now)
		g.write(context.Background(), w)
		return
	}
	key := p.Namespace + "/" + owner.UID
	g.mu.Lock()
	w, ok := g.open[key]
	if !ok {
		w = evidence.NewWindow(p.Namespace, owner, now)
		w.DryRun = g.dryRun
		g.open[key] = w
	}
	w.Add(rec, now)
	g.mu.Unlock()
}

// run writes each window once it has been open for the window length, and every open window when
// ctx is done (a graceful stop loses no Event).
func (g *aggregator) run(ctx context.Context) {
	t := g.clock.NewTicker(flushTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			g.flush(context.WithoutCancel(ctx), true)
			return
		case <-t.C():
			// Not cancelled with ctx: a window taken out of the open set is written even when
			// the controller stops meanwhile (Events are harmless after the lease is gone).
			g.flush(context.WithoutCancel(ctx), false)
		}
	}
}

func (g *aggregator) flush(ctx context.Context, all bool) {
	now := g.clock.Now()
	var due []*evidence.Window
	g.mu.Lock()
	for key, w := range g.open {
		if all || !now.Before(w.Start.Add(g.window)) {
			due = append(due, w)
			delete(g.open, key)
		}
	}
	g.mu.Unlock()
	for _, w := range due {
		g.write(ctx, w)
	}
}

func (g *aggregator) write(ctx context.Context, w *evidence.Window) {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	ev, err := evidenceEvent(w)
	if err == nil {
		_, err = g.client.CoreV1().Events(w.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		g.metrics.observeError(w.Namespace, OpEvidence)
		g.log.Error("write evidence event; the log lines remain", "namespace", w.Namespace,
			"owner", w.Owner.Kind+"/"+w.Owner.Name, "pods", w.Count, "err", err)
	}
}
