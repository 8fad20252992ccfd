package chartinstall

import "testing"

func TestMetricValueReadsTheFirstSampleWhateverItsLabels(t *testing.T) {
	text := `# HELP pressure_agent_detection_latency_seconds Time from the crossing to the request.
# TYPE pressure_agent_detection_latency_seconds histogram
pressure_agent_detection_latency_seconds_bucket{node="n",le="0.05"} 1
pressure_agent_detection_latency_seconds_sum{node="n"} 0.042
pressure_agent_detection_latency_seconds_count{node="n"} 1
process_resident_memory_bytes 3.3e+07
process_resident_memory_bytes_max 1
`
	for _, tc := range []struct {
		name string
		want float64
		ok   bool
	}{
		{"pressure_agent_detection_latency_seconds_sum", 0.042, true},
		{"pressure_agent_detection_latency_seconds_count", 1, true},
		{"process_resident_memory_bytes", 3.3e7, true},
		{"pressure_agent_detection_latency_seconds", 0, false},
		{"absent", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := MetricValue(text, tc.name)
			if got != tc.want || ok != tc.ok {
				t.Errorf("MetricValue(%q) = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
			}
		})
	}
}
