package actuate

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// frontProxy is a TLS reverse proxy in front of the real API server. Its eviction and pod DELETE
// answers can be replaced by a status of its own (429 or 503 with Retry-After, as API Priority and
// Fairness and an overloaded apiserver answer); every other request reaches the API server.
type frontProxy struct {
	srv *httptest.Server
	// refuse is the status the next eviction and DELETE requests are answered with; 0 passes them.
	refuse atomic.Int32
	// refuseOnce clears refuse after one refusal.
	refuseOnce atomic.Bool
	// refused counts the refused requests.
	refused atomic.Int32
}

func (e *env) frontProxy() *frontProxy {
	e.t.Helper()
	target, err := url.Parse(e.config.Host)
	if err != nil {
		e.t.Fatal(err)
	}
	rt, err := rest.TransportFor(e.config)
	if err != nil {
		e.t.Fatal(err)
	}
	p := &frontProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: rt}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := int(p.refuse.Load())
		if code == 0 || !isEvictionOrDelete(r) {
			rp.ServeHTTP(w, r)
			return
		}
		if p.refuseOnce.Load() {
			p.refuse.Store(0)
		}
		p.refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"front proxy says %d","reason":%q,"code":%d}`,
			code, reasonOf(code), code)
	}))
	p.srv.EnableHTTP2 = true // as the API server: the answer counting must work over HTTP/2
	p.srv.StartTLS()
	e.t.Cleanup(p.srv.Close)
	return p
}

func isEvictionOrDelete(r *http.Request) bool {
	return (r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/eviction")) ||
		(r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/pods/"))
}

func reasonOf(code int) string {
	if code == http.StatusTooManyRequests {
		return "TooManyRequests"
	}
	return "ServiceUnavailable"
}

// client returns a client of the API server through the proxy at host (the proxy's, or another).
func (p *frontProxy) client(e *env, host string) kubernetes.Interface {
	e.t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	c, err := kubernetes.NewForConfig(&rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// testAnswersNeverReachTheKillRung runs the full ladder (delete and cgroup kill allowed, hard
// pressure) through a front proxy that answers the eviction 429 or 503 with Retry-After. client-go
// retries such answers, waiting as told, until the call's deadline: the call ends in a timeout, and
// that timeout must not count as "the API server is unreachable". A refused connection must.
func testAnswersNeverReachTheKillRung(e *env) {
	ns := e.namespace("front-proxy")
	e.node("node-front-proxy")
	p := e.runningPod(ns, "web", "node-front-proxy", nil)
	fp := e.frontProxy()
	full := LadderConfig{AllowDelete: true, AllowCgroupKill: true, PDBFallbackWait: 100 * time.Millisecond}
	run := func(c kubernetes.Interface) (Result, *recordingKiller) {
		killer := &recordingKiller{}
		l := &Ladder{Evictor: &Evictor{Client: c}, Killer: killer, Clock: clock.RealClock{}, Config: full}
		ctx, cancel := context.WithTimeout(e.ctx, 2500*time.Millisecond)
		defer cancel()
		res, _ := l.Evict(ctx, req(p, true, 1))
		return res, killer
	}

	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		fp.refuse.Store(int32(code))
		before := fp.refused.Load()
		res, killer := run(fp.client(e, fp.srv.URL))
		if n := fp.refused.Load() - before; n < 2 {
			e.t.Errorf("%d: the proxy refused %d requests, want client-go's Retry-After retries (at least 2)", code, n)
		}
		if len(killer.killed) != 0 || res.Rung == RungCgroupKill {
			e.t.Errorf("%d answers ending in a timeout reached the kill rung: %+v (err %v)", code, res, res.Err())
		}
		if evErr := res.Attempts[0].Err; res.Outcome != OutcomeUnavailable || IsUnreachable(evErr) {
			e.t.Errorf("%d answers: outcome %s, eviction unreachable %v (err %v); want unavailable, reachable",
				code, res.Outcome, IsUnreachable(evErr), evErr)
		}
		e.assertUntouched(ns, "web")
	}

	// The control: a refused connection is the API server being unreachable, and only that kills.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	l.Close()
	res, killer := run(fp.client(e, closed))
	if len(killer.killed) != 1 || res.Rung != RungCgroupKill {
		e.t.Errorf("refused connection: %+v (err %v), killed %v; want the kill rung", res, res.Err(), killer.killed)
	}

	// And the proxy does reach the API server: one 503, then client-go's retry evicts.
	fp.refuse.Store(http.StatusServiceUnavailable)
	fp.refuseOnce.Store(true)
	res, killer = run(fp.client(e, fp.srv.URL))
	if res.Outcome != OutcomeEvicted || len(killer.killed) != 0 {
		e.t.Errorf("one 503 then the API server: %+v (err %v), killed %v; want evicted", res, res.Err(), killer.killed)
	}
	e.assertTerminating(p, 1)
}
