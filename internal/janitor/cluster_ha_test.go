package janitor_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

type replica struct {
	id   string
	reg  *prometheus.Registry
	stop func() error
	addr string // health probe address
}

func leaderConfig(ns string) config.Config {
	cfg := testConfig(0, ns)
	cfg.LeaderElection = config.LeaderElectionConfig{Enabled: true, LeaseName: "janitor-" + ns, LeaseNamespace: ns,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
	return cfg
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startReplica(t *testing.T, rc restConfig, cfg config.Config, id string) *replica {
	r := &replica{id: id, reg: prometheus.NewRegistry(), addr: freeAddr(t)}
	cfg.HealthProbeAddr = r.addr
	r.stop = startJanitor(t, cfg, janitor.Options{RESTConfig: rc, Clock: clock.RealClock{}, Registry: r.reg,
		Logger: testLogger(t, id), Identity: id})
	return r
}

func (r *replica) deleted(t *testing.T) float64 {
	return metricSum(t, r.reg, "pressure_janitor_pods_deleted_total")
}

func leaseHolder(ctx context.Context, c kubernetes.Interface, ns string) string {
	l, err := c.CoordinationV1().Leases(ns).Get(ctx, "janitor-"+ns, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func testLeaderElection(t *testing.T, rc restConfig, client kubernetes.Interface, f *fixtures) {
	ctx := context.Background()
	const ns = "ha"
	f.namespace(ns)
	cfg := leaderConfig(ns)
	a, b := startReplica(t, rc, cfg, "replica-a"), startReplica(t, rc, cfg, "replica-b")
	var leader, standby *replica
	eventually(t, 30*time.Second, "a leader", func() error {
		switch leaseHolder(ctx, client, ns) {
		case a.id:
			leader, standby = a, b
		case b.id:
			leader, standby = b, a
		default:
			return fmt.Errorf("no holder yet")
		}
		return nil
	})
	probe(t, standby.addr, "/readyz", http.StatusOK)
	probe(t, leader.addr, "/healthz", http.StatusOK)

	const batch = 20
	evictBatch(f, ns, "first", batch)
	waitForCount(t, client, ns, 0)
	if got := standby.deleted(t); got != 0 {
		t.Errorf("standby %s deleted %v pods; want 0", standby.id, got)
	}
	waitDeleted(t, leader, batch)

	cancelled := time.Now()
	if err := leader.stop(); err != nil {
		t.Errorf("leader stopped with %v", err)
	}
	evictBatch(f, ns, "second", batch)
	eventually(t, cfg.LeaderElection.LeaseDuration, "hand-over within the lease duration", func() error {
		if h := leaseHolder(ctx, client, ns); h != standby.id {
			return fmt.Errorf("holder %q", h)
		}
		return nil
	})
	t.Logf("hand-over took %s (lease duration %s)", time.Since(cancelled).Round(time.Millisecond), cfg.LeaderElection.LeaseDuration)
	waitForCount(t, client, ns, 0)
	if got := leader.deleted(t); got != batch {
		t.Errorf("old leader %s deleted %v pods in all; want %d (nothing after it was cancelled)", leader.id, got, batch)
	}
	waitDeleted(t, standby, batch)
	waitEvidence(t, client, ns, 2*batch)
}

// waitDeleted waits until r has counted want deletions and fails unless it counts exactly want. The
// counter goes up after the DELETE returns, so the pod may be gone from the API a moment before it is
// counted (19 of 20 seen once the namespace was empty).
func waitDeleted(t *testing.T, r *replica, want float64) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%s counts %v deletions", r.id, want), func() error {
		if got := r.deleted(t); got < want {
			return fmt.Errorf("%v so far", got)
		}
		return nil
	})
	if got := r.deleted(t); got != want {
		t.Errorf("%s deleted %v pods; want %v", r.id, got, want)
	}
}

// waitEvidence waits for want evidence Events in ns and fails unless there are exactly want. The
// aggregator writes them after the deletions, asynchronously: the last ones may land after the last pod
// is gone (39 of 40 seen at once in a -race run).
func waitEvidence(t *testing.T, client kubernetes.Interface, ns string, want int) {
	t.Helper()
	var evs *corev1.EventList
	eventually(t, 30*time.Second, "one evidence event per pod", func() error {
		var err error
		evs, err = client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + evidence.EventReason})
		if err != nil {
			return err
		}
		if len(evs.Items) < want {
			return fmt.Errorf("%d evidence events so far", len(evs.Items))
		}
		return nil
	})
	if len(evs.Items) != want {
		t.Errorf("%d evidence events; want one per pod, %d", len(evs.Items), want)
	}
}

func evictBatch(f *fixtures, ns, prefix string, n int) {
	for i := range n {
		f.evicted(ns, fmt.Sprintf("%s-%02d", prefix, i), time.Now().Add(-time.Hour))
	}
}

// waitForAtMost waits until at most most pods are left in ns and returns how many are.
func waitForAtMost(t *testing.T, client kubernetes.Interface, ns string, most int) int {
	t.Helper()
	left := -1
	eventually(t, 60*time.Second, fmt.Sprintf("at most %d pods left in %s", most, ns), func() error {
		names, err := podNames(context.Background(), client, ns)
		if err != nil {
			return err
		}
		if left = len(names); left > most {
			return fmt.Errorf("%d pods", left)
		}
		return nil
	})
	return left
}

func waitForCount(t *testing.T, client kubernetes.Interface, ns string, want int) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("%d pods left in %s", want, ns), func() error {
		names, err := podNames(context.Background(), client, ns)
		if err != nil {
			return err
		}
		if len(names) != want {
			return fmt.Errorf("%d pods", len(names))
		}
		return nil
	})
}

func probe(t *testing.T, addr, path string, want int) {
	t.Helper()
	eventually(t, 10*time.Second, "GET "+path, func() error {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// TestJanitorRecoversFromAPIServerRestart stops kube-apiserver while the janitor works through
// a rate-limited backlog; after the restart it finishes, with one evidence Event per pod.
func TestJanitorRecoversFromAPIServerRestart(t *testing.T) {
	cp := clustertest.ControlPlane(t, withoutWorkloadControllers())
	client, err := cp.Client()
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ctx := context.Background()
	f := newFixtures(t, client, "fake-node-2")
	const ns, n = "restart", 60
	f.namespace(ns)
	evictBatch(f, ns, "p", n)
	cfg := leaderConfig(ns)
	cfg.LeaderElection.LeaseDuration, cfg.LeaderElection.RenewDeadline = 60*time.Second, 45*time.Second
	cfg.DeletionsPerSec, cfg.Burst = 3, 1
	cfg.MetricsAddr = freeAddr(t)
	r := startReplica(t, cp.RESTConfig(), cfg, "restart")
	// At most n-10 left, not exactly: on a loaded host a poll can miss the moment it was n-10 (a run saw
	// it go from 60 to 0 between two polls at 5 deletions per second).
	if left := waitForAtMost(t, client, ns, n-10); left == 0 {
		t.Fatalf("the janitor deleted the whole backlog before the API server was stopped: the restart would test nothing")
	}
	if err := cp.StopAPIServer(); err != nil {
		t.Fatalf("stop apiserver: %v", err)
	}
	time.Sleep(3 * time.Second) // the janitor's calls fail meanwhile
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := cp.StartAPIServer(startCtx); err != nil {
		t.Fatalf("start apiserver: %v", err)
	}
	waitForCount(t, client, ns, 0)
	waitEvidence(t, client, ns, n)
	resp, err := http.Get("http://" + cfg.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read /metrics: %v", err)
	}
	if m := string(body); !strings.Contains(m, "pressure_janitor_errors_total") || !strings.Contains(m, "pressure_janitor_pods_deleted_total") {
		t.Errorf("/metrics lacks the error and deletion counters after the outage:\n%s", m)
	}
	t.Logf("deleted %v pods (a delete whose reply was lost to the outage counts as gone), errors %v",
		r.deleted(t), metricSum(t, r.reg, "pressure_janitor_errors_total"))
}
