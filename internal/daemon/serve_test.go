package daemon

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricsAddressServesPprofOnlyWithProfiling(t *testing.T) {
	for _, tc := range []struct {
		name      string
		profiling bool
		want      int
	}{
		{name: "profiling off hides /debug/pprof/", want: http.StatusNotFound},
		{name: "profiling on serves the heap profile", profiling: true, want: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			MetricsHandler(prometheus.NewRegistry(), tc.profiling).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/heap?debug=1", nil))
			if rec.Code != tc.want {
				t.Errorf("GET /debug/pprof/heap = %d, want %d", rec.Code, tc.want)
			}
		})
	}
}

func TestServeAnswersUntilTheContextEndsAndZeroDisables(t *testing.T) {
	var wg sync.WaitGroup
	for _, addr := range []string{"", "0"} {
		if got, err := Serve(context.Background(), addr, http.NotFoundHandler(), &wg); got != "" || err != nil {
			t.Errorf("Serve(%q) = %q, %v; want disabled", addr, got, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := Serve(ctx, "127.0.0.1:0", MetricsHandler(NewRegistry(), false), &wg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("GET /metrics = %d with %d bytes; want 200 with the Go collector's metrics", resp.StatusCode, len(body))
	}
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the server did not shut down within a minute of the context's end")
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("the server still answers after its context ended")
	}
}

func TestServeNamesTheAddressItCannotListenOn(t *testing.T) {
	var wg sync.WaitGroup
	if _, err := Serve(context.Background(), "nope", http.NotFoundHandler(), &wg); err == nil || !strings.HasPrefix(err.Error(), "listen nope:") {
		t.Errorf("Serve(nope) = %v; want an error naming the address", err)
	}
}
