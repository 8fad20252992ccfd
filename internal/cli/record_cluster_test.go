package cli

// Level-1 test of `kubectl pressure record` on a real kube-apiserver + etcd: a kubelet stand-in (a TLS
// server the apiserver trusts, clustertest.KubeletServer) serves a Summary and /configz through the
// apiserver's node proxy, once too slowly.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// answeringKubelet serves the seed snapshot's Summary and /configz; the third Summary waits 3 s.
// /metrics/resource gives the node's memory a new time, 1.013 s later, at each call, until noMetrics is
// set; then it is not found, as on a kubelet that does not serve it.
func answeringKubelet(t *testing.T, noMetrics *atomic.Bool) http.Handler {
	t.Helper()
	summary, err := os.ReadFile(filepath.Join("testdata", "snapshots", "seed", FileSummary))
	if err != nil {
		t.Fatal(err)
	}
	configz, err := os.ReadFile(filepath.Join("testdata", "snapshots", "seed", FileKubeletConfig))
	if err != nil {
		t.Fatal(err)
	}
	var summaries, metrics atomic.Int32
	base := time.Date(2026, 12, 7, 15, 24, 14, 277e6, time.UTC).UnixMilli()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics/resource":
			if noMetrics.Load() {
				http.NotFound(w, r)
				return
			}
			at := base + int64(metrics.Add(1))*1013
			_, _ = fmt.Fprintf(w, "# TYPE node_memory_working_set_bytes gauge\nnode_memory_working_set_bytes 2.1e+09 %d\n", at)
		case "/stats/summary":
			if summaries.Add(1) == 3 {
				time.Sleep(3 * time.Second)
			}
			_, _ = w.Write(summary)
		case "/configz":
			_, _ = w.Write(configz)
		default:
			http.NotFound(w, r)
		}
	})
}

// recordCLI runs kubectl-pressure with ctx and returns stderr and the error.
func recordCLI(ctx context.Context, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	err := Run(ctx, streams, args)
	return errOut.String(), err
}

func readInfo(t *testing.T, dir string) RecordingInfo {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, FileRecording))
	if err != nil {
		t.Fatal(err)
	}
	var info RecordingInfo
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func TestRecordTakesSnapshotsSkipsASlowOneAndStopsCleanlyOnInterrupt(t *testing.T) {
	cp, cs, ctx := controlPlane(t, 3*time.Minute)
	var noMetrics atomic.Bool
	ip, port := clustertest.KubeletServer(t, cp, answeringKubelet(t, &noMetrics))
	createNode(ctx, t, cs, "rec-node", ip, port)
	kc := []string{"--kubeconfig", cp.Kubeconfig()}

	dir := filepath.Join(t.TempDir(), "rec")
	stderr, err := recordCLI(ctx, append(kc, "record", "rec-node", "--every", "200ms", "--for", "4s", "--kubelet-timeout", "1s",
		"--out", dir)...)
	if err != nil {
		t.Fatalf("record: %v\n%s", err, stderr)
	}
	info := readInfo(t, dir)
	if info.Node != "rec-node" || info.Failures != 1 || info.Snapshots < 5 || info.Interrupted || !info.Redacted {
		t.Errorf("recording.json %+v, want node rec-node, 1 skipped snapshot, 5 or more recorded, not interrupted", info)
	}
	for _, want := range []string{"record rec-node: 1 snapshots", "snapshot skipped (1 so far)", "no answer within 1s",
		"record rec-node: done: "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	rec, err := LoadRecording(dir)
	if err != nil {
		t.Fatalf("the recording does not load: %v", err)
	}
	if rec.Recording.Snapshots != info.Snapshots || rec.Recording.Node != "rec-node" {
		t.Errorf("loaded %d snapshots of node %q, recording.json says %d", rec.Recording.Snapshots, rec.Recording.Node, info.Snapshots)
	}
	if _, err := runCLI(t, "simulate", dir, "--no-agent"); err != nil {
		t.Errorf("simulate the recording: %v", err)
	}
	// Each recorded snapshot has the time of the kubelet's node memory stats, to the millisecond.
	if n := len(rec.Recording.StatsTimes); n != info.Snapshots || rec.Recording.StatsTimes[0].Nanosecond()%1e6 != 0 ||
		rec.Recording.StatsTimes[0].Nanosecond() == 0 {
		t.Errorf("stats times %v, want one per snapshot (%d), in milliseconds", rec.Recording.StatsTimes, info.Snapshots)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("a kubelet serving /metrics/resource gave a warning:\n%s", stderr)
	}

	// A kubelet without /metrics/resource: the recording goes on without the stats times, said once.
	noMetrics.Store(true)

	// Ctrl-C: the context is cancelled while recording; what was recorded stays, and that is no error.
	dir2 := filepath.Join(t.TempDir(), "rec2")
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	var stderr2 string
	go func() {
		var err error
		stderr2, err = recordCLI(rctx, append(kc, "record", "rec-node", "--every", "200ms", "--for", "1m", "--out", dir2)...)
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if entries, _ := os.ReadDir(dir2); len(entries) >= 4 {
			break
		}
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("record interrupted: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("record did not stop within 20s of the interruption")
	}
	info2 := readInfo(t, dir2)
	if !info2.Interrupted || info2.Snapshots < 3 || !strings.Contains(stderr2, "interrupted, kept what was recorded") {
		t.Errorf("interrupted recording: %+v, stderr:\n%s", info2, stderr2)
	}
	entries, _ := os.ReadDir(dir2)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("a half-written snapshot %s was left behind", e.Name())
		}
	}
	if n := strings.Count(stderr2, "warning: GET /api/v1/nodes/rec-node/proxy/metrics/resource"); n != 1 ||
		!strings.Contains(stderr2, "snapshots without stats-times.json go on") {
		t.Errorf("stderr says %d times that the kubelet's stats times are missing, want once:\n%s", n, stderr2)
	}
	if rec, err := LoadRecording(dir2); err != nil || rec.Recording.Snapshots != info2.Snapshots || len(rec.Recording.StatsTimes) != 0 {
		t.Errorf("the interrupted recording loads: %v (%d snapshots, recording.json %d, stats times %v)", err,
			rec.Recording.Snapshots, info2.Snapshots, rec.Recording.StatsTimes)
	}

	if _, err := recordCLI(ctx, append(kc, "record", "rec-node", "--out", dir)...); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("record into a used directory: %v, want an error saying it is not empty", err)
	}
	if _, err := recordCLI(ctx, append(kc, "record", "rec-node", "--every", "10ms", "--out", t.TempDir()+"/x")...); err == nil ||
		!strings.Contains(err.Error(), "--every 10ms: at least 100ms") {
		t.Errorf("record --every 10ms: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "y")
	if _, err := recordCLI(ctx, append(kc, "record", "nowhere", "--out", missing)...); err == nil ||
		!strings.Contains(err.Error(), `first snapshot: get node nowhere`) {
		t.Errorf("record of a missing node: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a failed record created %s (stat: %v)", missing, err)
	}
}
