package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resourceMetrics is the shape of the kubelet's /metrics/resource (v1.37, read on the e2e node),
// shortened: container samples first, then the node's, each with its timestamp in milliseconds.
const resourceMetrics = `# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="agent",namespace="pressure-system",pod="pressure-agent-zzhq5"} 1.1051008e+07 1796657249424
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 2.119581696e+09 1796657254277
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`

func TestParseNodeMemoryTime(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     time.Time // zero: an error
		errHas   string
	}{
		{"the node's sample gives its timestamp to the millisecond", resourceMetrics, time.UnixMilli(1796657254277).UTC(), ""},
		{"labels on the node's sample are passed over", "node_memory_working_set_bytes{a=\"b c\"} 1 1796657254278\n",
			time.UnixMilli(1796657254278).UTC(), ""},
		{"a metric whose name begins with the node's is another metric",
			"node_memory_working_set_bytes_total 1 1796657254270\nnode_memory_working_set_bytes 2 1796657254279\n",
			time.UnixMilli(1796657254279).UTC(), ""},
		{"no sample of the node is an error naming the metric", "resource_scrape_error 1\n", time.Time{},
			"GET /metrics/resource: field node_memory_working_set_bytes: no sample of it"},
		{"a sample without a timestamp is an error naming the line", "# c\nnode_memory_working_set_bytes 2.1e+09\n", time.Time{},
			"line 2, column 1: field node_memory_working_set_bytes: value \"node_memory_working_set_bytes 2.1e+09\": want a value and a timestamp"},
		{"a timestamp that is not whole milliseconds is an error naming it", "node_memory_working_set_bytes 1 1.5e12\n", time.Time{},
			`value "1.5e12": timestamp: want an integer of milliseconds`},
		{"a timestamp before 2000 is not a kubelet's time", "node_memory_working_set_bytes 0e000 0000000000001\n", time.Time{},
			`value "0000000000001": timestamp: want an integer of milliseconds since the epoch, in 2000 or later`},
		{"a value that is not a number is an error naming it", "node_memory_working_set_bytes x 5\n", time.Time{},
			`value "x": value: strconv.ParseFloat`},
		{"labels without their closing brace are an error", "node_memory_working_set_bytes{a=\"b\" 1 5\n", time.Time{},
			"labels without their closing brace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseNodeMemoryTime(strings.NewReader(tc.in), "GET /metrics/resource")
			if tc.want.IsZero() {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one containing %q", err, tc.errHas)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("parseNodeMemoryTime = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func FuzzParseNodeMemoryTime(f *testing.F) {
	f.Add([]byte(resourceMetrics))
	f.Add([]byte("node_memory_working_set_bytes{a=\"}\"} 1 1796657254277\n"))
	f.Add([]byte("node_memory_working_set_bytes\t1\t1796657254277\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseNodeMemoryTime(bytes.NewReader(data), "metrics")
		if err != nil {
			if !got.IsZero() {
				t.Errorf("error %v with a time %s", err, got)
			}
			return
		}
		// Accepted: a line of the input names the node's metric and ends in that timestamp, in 2000 or later.
		found := false
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 3 || !strings.HasPrefix(fields[0], nodeMemoryMetric) {
				continue
			}
			if ms, err := strconv.ParseInt(fields[len(fields)-1], 10, 64); err == nil && ms == got.UnixMilli() {
				found = true
			}
		}
		if !found || got.Before(minStatsTime) {
			t.Errorf("time %s (%d ms) accepted, but no line of the input ends in it, or it is before 2000", got, got.UnixMilli())
		}
	})
}

func TestStatsTimesFileRoundTripsAndBadOnesAreNamed(t *testing.T) {
	at := time.Date(2026, 12, 7, 15, 24, 14, 277e6, time.UTC)
	src := filepath.Join("testdata", "snapshots", "healthy")
	snap, err := LoadSnapshotDir(os.DirFS(src), src)
	if err != nil {
		t.Fatal(err)
	}
	if snap.StatsTimes != nil {
		t.Errorf("StatsTimes of a snapshot without %s = %+v, want nil", FileStatsTimes, snap.StatsTimes)
	}
	if err := snap.SetStatsTimes(StatsTimes{NodeMemory: at, Source: "GET /api/v1/nodes/n/proxy/metrics/resource"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := snap.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSnapshotDir(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.StatsTimes == nil || !back.StatsTimes.NodeMemory.Equal(at) || back.StatsTimes.Kind != KindStatsTimes {
		t.Fatalf("StatsTimes read back = %+v, want the node's memory at %s", back.StatsTimes, at)
	}
	for _, tc := range []struct{ name, content, errHas string }{
		{"another kind", `{"kind": "Other", "nodeMemory": "2026-12-07T15:24:14.277Z"}`, `field kind: value "Other": want "KubeletStatsTimes"`},
		{"no time", `{"kind": "KubeletStatsTimes"}`, "field nodeMemory: missing"},
		{"not a time", `{"kind": "KubeletStatsTimes", "nodeMemory": "soon"}`, `field nodeMemory: value "soon": want an RFC 3339 time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, FileStatsTimes), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadSnapshotDir(os.DirFS(dir), dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileStatsTimes)) || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("LoadSnapshotDir with %s = %v, want an error naming its path and %q", tc.content, err, tc.errHas)
			}
		})
	}
}

func FuzzParseStatsTimes(f *testing.F) {
	f.Add([]byte(`{"kind": "KubeletStatsTimes", "nodeMemory": "2026-12-07T15:24:14.277Z", "source": "GET x"}`))
	f.Add([]byte(`{"kind": "KubeletStatsTimes", "nodeMemory": "0001-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStatsTimes(bytes.NewReader(data), FileStatsTimes)
		if err != nil {
			if st != nil {
				t.Errorf("error %v with a value %+v", err, st)
			}
			return
		}
		if st.NodeMemory.IsZero() || st.Kind != KindStatsTimes {
			t.Errorf("%+v accepted", st)
		}
		out, err := marshalStatsTimes(*st)
		if err != nil {
			t.Fatalf("marshal of a parsed file: %v", err)
		}
		back, err := ParseStatsTimes(bytes.NewReader(out), FileStatsTimes)
		if err != nil || !back.NodeMemory.Equal(st.NodeMemory) || back.Source != st.Source {
			t.Errorf("written back and read again: %+v, %v; want %+v", back, err, st)
		}
	})
}
