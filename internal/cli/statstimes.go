package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// FileStatsTimes holds, in a snapshot taken by record, when the kubelet last measured the node's memory,
// to the millisecond. The Summary gives that time in whole seconds; the kubelet's /metrics/resource
// gives it in milliseconds (node_memory_working_set_bytes' sample timestamp). Every sync of the
// kubelet's eviction loop asks cAdvisor for fresh stats, so the distinct times of a recording are the
// loop's syncs (and the memcg notifier's), and simulate places the recorded kubelet's loop from them
// (sim.Recording.InferPhase). It is optional: a snapshot without it is read as before.
const FileStatsTimes = "stats-times.json"

// KindStatsTimes is the kind of FileStatsTimes.
const KindStatsTimes = "KubeletStatsTimes"

// fileResourceMetrics names the kubelet's /metrics/resource among the kubelet endpoints a fetch reads
// (kubeletPath); it is read for FileStatsTimes and not written.
const fileResourceMetrics = "metrics-resource"

// nodeMemoryMetric is the /metrics/resource sample whose timestamp is the node's memory stats time.
const nodeMemoryMetric = "node_memory_working_set_bytes"

// minStatsTime is the earliest stats time taken for one: a kubelet's clock before it is not a time.
var minStatsTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// StatsTimes is the content of FileStatsTimes.
type StatsTimes struct {
	Kind string `json:"kind"`
	// NodeMemory is the time of the kubelet's latest measurement of the node's memory.
	NodeMemory time.Time `json:"nodeMemory"`
	// Source names the endpoint it was read from.
	Source string `json:"source,omitempty"`
}

// ParseStatsTimes reads FileStatsTimes from r; file names it in errors, with the field and the value.
func ParseStatsTimes(r io.Reader, file string) (*StatsTimes, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &FileError{File: file, Err: err}
	}
	var in struct {
		Kind       string `json:"kind"`
		NodeMemory string `json:"nodeMemory"`
		Source     string `json:"source"`
	}
	if err := decodeJSON(file, data, &in); err != nil {
		return nil, err
	}
	if in.Kind != KindStatsTimes {
		return nil, &FileError{File: file, Field: "kind", Value: in.Kind, Err: fmt.Errorf("want %q", KindStatsTimes)}
	}
	if in.NodeMemory == "" {
		return nil, &FileError{File: file, Field: "nodeMemory", Err: errors.New("missing, want the time of the node's memory stats")}
	}
	at, err := time.Parse(time.RFC3339Nano, in.NodeMemory)
	if err != nil || at.IsZero() {
		return nil, &FileError{File: file, Field: "nodeMemory", Value: in.NodeMemory, Err: errors.New("want an RFC 3339 time after year 1")}
	}
	return &StatsTimes{Kind: in.Kind, NodeMemory: at, Source: in.Source}, nil
}

// marshalStatsTimes is FileStatsTimes' content (indented, as the other files of a snapshot).
func marshalStatsTimes(st StatsTimes) ([]byte, error) {
	st.Kind = KindStatsTimes
	return json.MarshalIndent(st, "", "  ")
}

// parseNodeMemoryTime finds the node_memory_working_set_bytes sample of a Prometheus text exposition
// (the kubelet's /metrics/resource) and returns its timestamp. source names the endpoint in errors,
// with the line and the value.
func parseNodeMemoryTime(r io.Reader, source string) (time.Time, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(text, nodeMemoryMetric)
		switch {
		case !ok:
			continue
		case strings.HasPrefix(rest, "{"): // labels (the kubelet's has none)
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				return time.Time{}, &FileError{File: source, Line: line, Column: 1, Field: nodeMemoryMetric, Value: text,
					Err: errors.New("labels without their closing brace")}
			}
			rest = rest[end+1:]
		case !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "\t"):
			continue // another metric whose name begins with this one's
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 {
			return time.Time{}, &FileError{File: source, Line: line, Column: 1, Field: nodeMemoryMetric, Value: text,
				Err: errors.New("want a value and a timestamp in milliseconds")}
		}
		if _, err := strconv.ParseFloat(fields[0], 64); err != nil {
			return time.Time{}, &FileError{File: source, Line: line, Column: 1, Field: nodeMemoryMetric, Value: fields[0],
				Err: fmt.Errorf("value: %w", err)}
		}
		ms, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil || ms < minStatsTime.UnixMilli() {
			return time.Time{}, &FileError{File: source, Line: line, Column: 1, Field: nodeMemoryMetric, Value: fields[1],
				Err: errors.New("timestamp: want an integer of milliseconds since the epoch, in 2000 or later")}
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	if err := sc.Err(); err != nil {
		return time.Time{}, &FileError{File: source, Line: line, Err: err}
	}
	return time.Time{}, &FileError{File: source, Field: nodeMemoryMetric, Err: errors.New("no sample of it")}
}

// fetchStatsTimes reads the kubelet's /metrics/resource through the node proxy, within timeout (0: none).
func fetchStatsTimes(ctx context.Context, cs kubernetes.Interface, node string, timeout time.Duration) (*StatsTimes, error) {
	source := "GET " + kubeletPath(node, fileResourceMetrics)
	raw, origin := map[string][]byte{}, map[string]string{fileResourceMetrics: source}
	if err := fetchKubelet(ctx, cs, node, timeout, raw, origin, fileResourceMetrics); err != nil {
		return nil, err
	}
	at, err := parseNodeMemoryTime(bytes.NewReader(raw[fileResourceMetrics]), source)
	if err != nil {
		return nil, err
	}
	return &StatsTimes{Kind: KindStatsTimes, NodeMemory: at, Source: source}, nil
}
