package loopbreaker

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// pausedNodes wraps the real transport: a request of method on a node waits until release is closed,
// then goes to the real API server. entered receives one value per paused request.
type pausedNodes struct {
	method  string
	next    http.RoundTripper
	entered chan struct{}
	release chan struct{}
}

func (p *pausedNodes) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == p.method && strings.Contains(r.URL.Path, "/nodes/") {
		p.entered <- struct{}{}
		<-p.release
	}
	return p.next.RoundTrip(r)
}

// within runs f and fails t when it does not return within d. It returns a channel closed once f
// returned: a blocked f returns only after the paused write is released.
func within(t *testing.T, d time.Duration, what string, f func()) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Errorf("%s blocked for %s while a ledger API call is paused", what, d)
	}
	return done
}

// realNode is a Node object on the real API server, with a client that does not pause.
type realNode struct {
	ctx   context.Context
	cp    *cluster.ControlPlane
	plain kubernetes.Interface
	name  string
}

func TestLedgerReadsOnTheRealAPIServer(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	plain, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, node string
		run        func(t *testing.T, rn realNode)
	}{
		{"a ledger read is not blocked by a slow write", "node-slow-write", testReadNotBlockedBySlowWrite},
		{"a ledger read is not blocked by a slow load", "node-slow-load", testReadNotBlockedBySlowLoad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := plain.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: tc.node}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			tc.run(t, realNode{ctx: ctx, cp: cp, plain: plain, name: tc.node})
		})
	}
}

func testReadNotBlockedBySlowWrite(t *testing.T, rn realNode) {
	ctx, plain, node := rn.ctx, rn.plain, rn.name
	slow, pause := pausedClient(t, rn.cp.RESTConfig(), http.MethodPatch)
	pl, err := LoadLedger(ctx, &NodeAnnotationStore{Client: slow, Node: node}, policy.LoopConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	first, second := evicted("a", deploy, now), evicted("b", deploy, now.Add(time.Second))
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	record := func(e policy.HistoryEntry) {
		defer wg.Done()
		_, _, err := pl.Record(ctx, e)
		errs <- err
	}
	wg.Add(1)
	go record(first)
	<-pause.entered // the first write is on its way to the API server, paused
	wg.Add(1)
	go record(second) // queues behind the first write

	reads := []<-chan struct{}{within(t, 2*time.Second, "Entries", func() {
		if !unsettled(pl.Entries(), first.UID) {
			t.Error("the first eviction is not in flight in memory while its write is paused")
		}
		// The second Record changes memory as soon as its goroutine runs, although its write must wait.
		for deadline := time.Now().Add(time.Second); !unsettled(pl.Entries(), second.UID); {
			if time.Now().After(deadline) {
				t.Error("the second eviction is not in flight in memory while the first write is paused")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})}
	reads = append(reads, within(t, 2*time.Second, "Entries", func() { _ = pl.Entries() }),
		within(t, 2*time.Second, "Avoidances", func() { _ = pl.Avoidances(now) }))

	close(pause.release)
	for _, done := range reads {
		<-done
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Record: %v", err)
		}
	}
	// The store holds the newest state: both entries, whatever order the writes took.
	n, err := plain.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := n.Annotations[LedgerAnnotation]
	for _, uid := range []string{first.UID, second.UID} {
		if !strings.Contains(stored, uid) {
			t.Errorf("stored ledger %s lacks the eviction of %s", stored, uid)
		}
	}
}

// pausedClient returns a client of the real API server whose requests of method on nodes wait for the
// returned pause's release.
func pausedClient(t *testing.T, c *rest.Config, method string) (kubernetes.Interface, *pausedNodes) {
	t.Helper()
	pause := &pausedNodes{method: method, entered: make(chan struct{}, 4), release: make(chan struct{})}
	cfg := rest.CopyConfig(c)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { pause.next = rt; return pause }
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client, pause
}

func testReadNotBlockedBySlowLoad(t *testing.T, rn realNode) {
	ctx, plain, node := rn.ctx, rn.plain, rn.name
	slow, pause := pausedClient(t, rn.cp.RESTConfig(), http.MethodGet)
	pl := NewPendingLedger(&NodeAnnotationStore{Client: slow, Node: node}, policy.LoopConfig{}, nil)
	now := time.Now()
	e := evicted("a", deploy, now)
	if _, _, err := pl.Record(ctx, e); err != nil { // pending: kept in memory, not written
		t.Fatal(err)
	}
	loaded := make(chan error, 1)
	go func() { loaded <- pl.Load(ctx) }()
	<-pause.entered // the GET of the stored ledger is paused
	done := within(t, 2*time.Second, "Entries", func() {
		if !unsettled(pl.Entries(), e.UID) {
			t.Error("the eviction recorded before the load is not in flight")
		}
	})
	close(pause.release)
	<-done
	if err := <-loaded; err != nil {
		t.Fatalf("Load: %v", err)
	}
	n, err := plain.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(n.Annotations[LedgerAnnotation], string(e.UID)) {
		t.Errorf("stored ledger %q lacks the eviction recorded before the load", n.Annotations[LedgerAnnotation])
	}
}
