package agent

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// slowTaint holds every PATCH of the node's taints for delay and records when the first one was sent
// and when the agent's eviction request for pod was sent; wrap gives each client its transport.
type slowTaint struct {
	node  string
	pod   string
	delay time.Duration

	mu        sync.Mutex
	taintSent time.Time
	evictSent time.Time
}

type slowTaintTransport struct {
	*slowTaint
	next http.RoundTripper
}

func (s *slowTaint) wrap(rt http.RoundTripper) http.RoundTripper { return slowTaintTransport{s, rt} }

func (s slowTaintTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now()
	switch {
	case req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/nodes/"+s.node) && bodyHas(req, `"taints"`):
		s.mu.Lock()
		if s.taintSent.IsZero() {
			s.taintSent = now
		}
		s.mu.Unlock()
		time.Sleep(s.delay)
	case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/pods/"+s.pod+"/eviction"):
		s.mu.Lock()
		if s.evictSent.IsZero() {
			s.evictSent = now
		}
		s.mu.Unlock()
	}
	return s.next.RoundTrip(req)
}

// bodyHas reports whether the request's body contains s, leaving the body readable.
func bodyHas(req *http.Request, s string) bool {
	if req.Body == nil {
		return false
	}
	b, err := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(b))
	return err == nil && bytes.Contains(b, []byte(s))
}

func (s *slowTaint) times() (taint, evict time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taintSent, s.evictSent
}

// Issue 11: the eviction request is the first API call after a decision; the taint goes out at the
// same moment and never holds it back.
func TestEvictionRequestDoesNotWaitForTheTaint(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	w := newWorld(t, client, "node-order")
	stress := w.scenario()
	const delay = 3 * time.Second
	slow := &slowTaint{node: w.node, pod: "stress", delay: delay}
	rc := rest.CopyConfig(cp.RESTConfig())
	rc.WrapTransport = slow.wrap
	r := w.start(w.config(false), rc)
	w.waitReady(r)
	w.tree.setPod(stress, "besteffort", 1550*mi)
	eventually(t, 20*time.Second, "stress pod evicted", func() error { return w.onlyTerminating("stress") })
	// On a loaded host the taint's goroutine may send its PATCH after the eviction went out: wait for
	// both. The behaviour, not a wall-clock limit: had the eviction waited for the taint, it would have
	// gone out no earlier than the held PATCH's return, delay after the PATCH was sent.
	var taint, evict time.Time
	eventually(t, 30*time.Second, "taint PATCH and eviction both sent", func() error {
		if taint, evict = slow.times(); taint.IsZero() || evict.IsZero() {
			return fmt.Errorf("taint PATCH sent at %v, eviction sent at %v", taint, evict)
		}
		return nil
	})
	if !evict.Before(taint.Add(delay)) {
		t.Errorf("the eviction request went out %s after the taint PATCH (held %s): it waited for the taint", evict.Sub(taint).Round(time.Millisecond), delay)
	}
	t.Logf("eviction request sent %s after the taint PATCH started (the PATCH was held %s)", evict.Sub(taint).Round(time.Millisecond), delay)
}
