package e2e

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/janitor"
)

// TestJanitorCleansPodEvictedByRealKubeletAfterTTL: a pod evicted by the real kubelet (not a
// status we wrote ourselves) is kept while its TTL runs, then deleted by pressure-janitor, which
// first writes the evidence Event.
func TestJanitorCleansPodEvictedByRealKubeletAfterTTL(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "janitor")
	evicted := evictHogByKubelet(ctx, t, e, ns, "hog")

	const ttl = 20 * time.Second
	cfg := config.Config{
		TTL: ttl, KeepPerOwner: 0, Reasons: config.DefaultReasons(), Namespaces: []string{ns},
		DeletionsPerSec: 10, Burst: 10, Workers: 1,
	}
	jctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- janitor.RunWithOptions(jctx, cfg, janitor.Options{
			RESTConfig: e.cp.RESTConfig(), Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("janitor.Run: %v", err)
		}
	}()

	seenAt := time.Now()
	var goneAt time.Time
	poll(ctx, t, "evicted pod deleted by the janitor", func() (bool, string) {
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, "hog", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			goneAt = time.Now()
			return true, ""
		}
		return false, "still present"
	})
	evictedAt := evictionTime(t, evicted)
	if goneAt.Before(evictedAt.Add(ttl)) {
		t.Errorf("pod deleted at %s, before its TTL ran out (evicted %s + %s)", goneAt.Format(time.RFC3339Nano),
			evictedAt.Format(time.RFC3339Nano), ttl)
	}
	t.Logf("evicted %s, janitor started %s, deleted %s (TTL %s)", evictedAt.Format(time.RFC3339),
		seenAt.Format(time.RFC3339), goneAt.Format(time.RFC3339), ttl)

	sel := fields.Set{"involvedObject.uid": string(evicted.UID), "reason": evidence.EventReason}.AsSelector()
	events, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 1 {
		t.Fatalf("evidence events for the pod: got %d, want 1", len(events.Items))
	}
	msg := events.Items[0].Message
	for _, want := range []string{"hog", "Evicted", "memory"} {
		if !strings.Contains(msg, want) {
			t.Errorf("evidence event message %q does not contain %q", msg, want)
		}
	}
}

// evictionTime is the DisruptionTarget condition's time the kubelet set on the evicted pod.
func evictionTime(t *testing.T, pod *corev1.Pod) time.Time {
	t.Helper()
	for _, c := range pod.Status.Conditions {
		if c.Type == "DisruptionTarget" {
			return c.LastTransitionTime.Time
		}
	}
	t.Fatalf("pod %s has no DisruptionTarget condition: %+v", pod.Name, pod.Status.Conditions)
	return time.Time{}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
