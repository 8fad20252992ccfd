package janitor

import (
	"net/http"
	"net/http/httptest"
	"testing"

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
			r := &runner{opts: Options{Registry: prometheus.NewRegistry(), Profiling: tc.profiling}}
			rec := httptest.NewRecorder()
			r.metricsMux().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/heap?debug=1", nil))
			if rec.Code != tc.want {
				t.Errorf("GET /debug/pprof/heap = %d, want %d", rec.Code, tc.want)
			}
		})
	}
}
