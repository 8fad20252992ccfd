package janitor_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/janitor"
)

// severable cuts a replica off the API server at once, like a killed process or a partition:
// every new request fails, so it can neither renew its lease, delete, nor write an Event.
type severable struct{ cut atomic.Bool }

func (s *severable) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if s.cut.Load() {
			return nil, errors.New("severed by the test")
		}
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// testLeaderKilledMidBacklog: two replicas, the leader is cut off while it works through a
// rate-limited backlog. The other takes over; every pod is deleted, none twice.
func testLeaderKilledMidBacklog(t *testing.T, rc restConfig, client kubernetes.Interface, f *fixtures) {
	ctx := context.Background()
	const ns, n = "kill", 300
	f.namespace(ns)
	_, rs := f.deployment(ns, "web")
	for i := range n {
		f.evicted(ns, fmt.Sprintf("web-%03d", i), time.Now().Add(-time.Hour), ownedByRS(rs))
	}
	deletions := watchDeletions(t, client, ns)

	cfg := leaderConfig(ns)
	cfg.DeletionsPerSec, cfg.Burst, cfg.Workers = 40, 1, 4
	cfg.KeepPerOwner = 0
	type rep struct {
		id  string
		reg *prometheus.Registry
		cut *severable
	}
	var reps []*rep
	for _, id := range []string{"kill-a", "kill-b"} {
		r := &rep{id: id, reg: prometheus.NewRegistry(), cut: &severable{}}
		rcc := rest.CopyConfig(rc)
		rcc.Wrap(r.cut.wrap)
		startJanitorTolerating(t, cfg, janitor.Options{RESTConfig: rcc, Clock: clock.RealClock{}, Registry: r.reg,
			Logger: testLogger(t, id), Identity: id}, janitor.ErrLeaseLost)
		reps = append(reps, r)
	}
	var leader, standby *rep
	eventually(t, 30*time.Second, "a leader that has deleted 60 pods", func() error {
		for i, r := range reps {
			if leaseHolder(ctx, client, ns) == r.id && metricSum(t, r.reg, "pressure_janitor_pods_deleted_total") >= 60 {
				leader, standby = r, reps[1-i]
				return nil
			}
		}
		return errors.New("not yet")
	})
	leader.cut.cut.Store(true)
	killedAt := time.Now()
	waitForCount(t, client, ns, 0)
	t.Logf("leader %s cut off after %v deletions; %s finished the backlog %s later", leader.id,
		metricSum(t, leader.reg, "pressure_janitor_pods_deleted_total"), standby.id, time.Since(killedAt).Round(time.Millisecond))

	byLeader := metricSum(t, leader.reg, "pressure_janitor_pods_deleted_total")
	byStandby := metricSum(t, standby.reg, "pressure_janitor_pods_deleted_total")
	notFound := metricValue(t, leader.reg, "pressure_janitor_delete_not_applied_total", "result", janitor.ResultNotFound) +
		metricValue(t, standby.reg, "pressure_janitor_delete_not_applied_total", "result", janitor.ResultNotFound)
	conflict := metricValue(t, leader.reg, "pressure_janitor_delete_not_applied_total", "result", janitor.ResultConflict) +
		metricValue(t, standby.reg, "pressure_janitor_delete_not_applied_total", "result", janitor.ResultConflict)
	t.Logf("deleted: %v by the killed leader, %v by the new one; 404 %v, 409 %v", byLeader, byStandby, notFound, conflict)
	// A delete the old leader sent just before the cut may have been applied without its reply:
	// at most one per worker goes uncounted.
	if sum := byLeader + byStandby; sum > n || sum < n-float64(cfg.Workers) {
		t.Errorf("deletions counted by the replicas: %v; want %d (at most %d replies lost to the cut)", sum, n, cfg.Workers)
	}
	if byStandby == 0 {
		t.Errorf("the new leader deleted nothing")
	}
	// The new leader lists after it took the lease, seconds after the cut: it sees no pod the old
	// leader deleted, so a 404 would mean two replicas worked on the same pod.
	if notFound != 0 {
		t.Errorf("%v deletes answered 404 Not Found; want 0 (no pod worked on by both replicas)", notFound)
	}
	if conflict != 0 {
		t.Errorf("%v deletes refused with 409 Conflict; want 0 (nothing changed the pods)", conflict)
	}
	if d := deletions.twice(); len(d) > 0 {
		t.Errorf("pods deleted twice: %v", d)
	}
	// The list above can show the namespace empty before the watch has delivered the last Deleted
	// events (ci44 of 2026-12-05 saw 299 of 300 at that moment): the watch gets a few seconds more.
	eventually(t, 10*time.Second, fmt.Sprintf("the watch sees all %d deletions", n), func() error {
		if got := deletions.total(); got != n {
			return fmt.Errorf("the watch saw %d deletions", got)
		}
		return nil
	})
}

// deletionWatch counts DELETED watch events per pod UID.
type deletionWatch struct {
	mu  sync.Mutex
	per map[string]int
}

func watchDeletions(t *testing.T, c kubernetes.Interface, ns string) *deletionWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch pods of %s: %v", ns, err)
	}
	d := &deletionWatch{per: map[string]int{}}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*v1.Pod); ok && ev.Type == watch.Deleted {
				d.mu.Lock()
				d.per[string(p.UID)]++
				d.mu.Unlock()
			}
		}
	}()
	return d
}

func (d *deletionWatch) total() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.per)
}

func (d *deletionWatch) twice() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for uid, k := range d.per {
		if k > 1 {
			out = append(out, uid)
		}
	}
	return out
}
