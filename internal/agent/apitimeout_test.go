package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// TestAPIDeadlineEndsAStalledCallButNoWatch: a server that answers nothing (a stalled API server) fails
// a GET after the timeout, while a watch on the same server stays open.
func TestAPIDeadlineEndsAStalledCallButNoWatch(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	timeout := 200 * time.Millisecond
	client, err := kubernetes.NewForConfig(withAPIDeadline(&rest.Config{Host: srv.URL, Timeout: time.Hour}, timeout))
	if err != nil {
		t.Fatal(err)
	}
	// The client's own timeout is an hour: an error at all (and well before a minute, a bound against
	// a hang, not a speed check on a loaded host) is the deadline at work; the error says which.
	start := time.Now()
	_, err = client.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
	if took := time.Since(start); err == nil || took > time.Minute {
		t.Errorf("GET on a stalled server: err %v after %s, want an error after about %s", err, took, timeout)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(fmt.Sprint(err), "deadline") {
		t.Errorf("GET error %v, want the deadline", err)
	}
	w, err := client.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		t.Errorf("watch ended or got %v (open %v) within %s: a watch must not get the deadline", ev.Type, ok, 5*timeout)
	case <-time.After(5 * timeout):
	}
}

// TestAgentPodWatchIsNotCut (level 1): with a 1 s API timeout, the agent's pod informer keeps one watch
// for 5 s (it was cut every timeout when the timeout was the HTTP client's), and every other request
// carries a deadline of at most the timeout.
func TestAgentPodWatchIsNotCut(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, client, "node-watch")
	w.pod("quiet", "besteffort", "", 100*mi)
	var mu sync.Mutex
	var watches int
	var noDeadline []string
	rc := rest.CopyConfig(cp.RESTConfig())
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			if isWatch(req) {
				if strings.HasSuffix(req.URL.Path, "/pods") {
					watches++
				}
			} else if d, ok := req.Context().Deadline(); !ok || time.Until(d) > time.Second {
				noDeadline = append(noDeadline, req.Method+" "+req.URL.Path)
			}
			mu.Unlock()
			return rt.RoundTrip(req)
		})
	}
	cfg := w.config(false)
	cfg.APITimeout = time.Second
	r := w.start(cfg, rc)
	w.waitReady(r)
	time.Sleep(5 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if watches != 1 {
		t.Errorf("%d pod watches in 5s with a 1s API timeout, want 1 (never cut)", watches)
	}
	if len(noDeadline) > 0 {
		t.Errorf("requests without a deadline of at most 1s: %v", noDeadline)
	}
	if got := counter(r.reg, "pressure_agent_errors_total"); got != 0 {
		t.Errorf("pressure_agent_errors_total %v, want 0", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
