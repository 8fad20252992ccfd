package janitor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/evidence"
)

// TestControllerWakesAtTheTTLExpiry drives the shell with client-go's fake clientset and a fake
// clock: the due pod is deleted after its evidence is written on the Deployment, and the waiting
// pod is deleted when the clock reaches its TTL, without any pod change. (The same behaviour on a
// real API server: cluster_test.go.)
func TestControllerWakesAtTheTTLExpiry(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "r", UID: "uid-ReplicaSet-r",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-d", Controller: ptr.To(true)}}}}
	due := evictedPod("a", "due", t0.Add(-time.Hour), ownedBy("ReplicaSet", "r"))
	later := evictedPod("a", "later", t0.Add(-time.Minute))
	client := fake.NewClientset(rs, due, later)
	clk := testingclock.NewFakeClock(t0)
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewController(ControllerOptions{Client: client, Clock: clk, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Policy: Policy{TTL: 10 * time.Minute, Reasons: []string{ReasonEvicted}},
		DeletionsPerSec: 100, Burst: 100, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitGone(t, client, "due")
	if _, err := client.CoreV1().Pods("a").Get(ctx, "later", metav1.GetOptions{}); err != nil {
		t.Fatalf("pod later deleted before its TTL: %v", err)
	}
	// Wait for the controller to arm its timer, then reach the expiry.
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	clk.Step(9*time.Minute - time.Second)
	time.Sleep(200 * time.Millisecond)
	if _, err := client.CoreV1().Pods("a").Get(ctx, "later", metav1.GetOptions{}); err != nil {
		t.Fatalf("pod later deleted a second before its TTL: %v", err)
	}
	clk.Step(time.Second)
	waitGone(t, client, "later")
	// The bare pod's Event at once; the Deployment's once its window closed (the clock moved 9 min).
	waitEvent(t, client, nil, evidence.EventName(string(later.UID)), "Pod", types.UID(later.UID))
	// The window's timer may be armed after the steps above on a loaded host (the due pod's deletion
	// and its evidence run on the workers): the wait moves the clock on until the window closes.
	waitEvent(t, client, clk, fmt.Sprintf("%s.%d", evidence.EventName("uid-d"), t0.Unix()), "Deployment", "uid-d")
}

// waitEvent waits for the evidence Event name on kind uid; with clk it steps the fake clock by 10s
// between reads.
func waitEvent(t *testing.T, client *fake.Clientset, clk *testingclock.FakeClock, name, kind string, uid types.UID) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ev, err := client.CoreV1().Events("a").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			if ev.InvolvedObject.Kind != kind || ev.InvolvedObject.UID != uid || ev.Count != 1 {
				t.Errorf("event %s on %s %s count %d; want %s %s count 1", name, ev.InvolvedObject.Kind, ev.InvolvedObject.UID, ev.Count, kind, uid)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("evidence event %s: %v", name, err)
		}
		if clk != nil {
			clk.Step(10 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitGone(t *testing.T, client *fake.Clientset, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := client.CoreV1().Pods("a").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("pod a/%s not deleted within 10s", name)
}
