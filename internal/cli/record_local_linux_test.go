//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// TestRecordAndSnapshotLocalAddTheAgentsView records a node (a kubelet stand-in behind a real
// kube-apiserver) with --local on a fixture cgroup tree: every snapshot holds cgroups.json with the
// reads taken since the previous one, more often than the snapshots; snapshot --local holds one read.
func TestRecordAndSnapshotLocalAddTheAgentsView(t *testing.T) {
	cp, cs, ctx := controlPlane(t, 3*time.Minute)
	ip, port := clustertest.KubeletServer(t, cp, answeringKubelet(t, new(atomic.Bool)))
	createNode(ctx, t, cs, "rec-node", ip, port)
	kc := []string{"--kubeconfig", cp.Kubeconfig()}
	local := []string{"--local", "--cgroup-root", cgroupFixture + "cgroupv1-cgroupfs", "--proc-root", procFixture}

	dir := filepath.Join(t.TempDir(), "rec")
	stderr, err := recordCLI(ctx, joinArgs(kc, []string{"record", "rec-node"}, local, []string{"--every", "500ms", "--for", "2s",
		"--local-every", "50ms", "--kubelet-timeout", "5s", "--out", dir})...)
	if err != nil {
		t.Fatalf("record --local: %v\n%s", err, stderr)
	}
	if info := readInfo(t, dir); info.LocalEvery != "50ms" {
		t.Errorf("recording.json localEvery %q, want 50ms", info.LocalEvery)
	}
	rec, err := LoadRecording(dir)
	if err != nil {
		t.Fatalf("the recording does not load: %v", err)
	}
	if n := len(rec.Recording.Local); n < 2*rec.Recording.Snapshots {
		t.Errorf("%d local reads in %d snapshots, want reads more often than the snapshots", n, rec.Recording.Snapshots)
	}
	for i := 1; i < len(rec.Recording.Local); i++ {
		if !rec.Recording.Local[i].At.After(rec.Recording.Local[i-1].At) {
			t.Errorf("local read %d at %s not after %s", i, rec.Recording.Local[i].At, rec.Recording.Local[i-1].At)
		}
	}
	if out, err := runCLI(t, "simulate", dir); err != nil || !strings.Contains(out, "local cgroup samples, every 50ms") {
		t.Errorf("simulate the recording: %v\n%s", err, out)
	}

	snap := filepath.Join(t.TempDir(), "snap")
	if stderr, err := recordCLI(ctx, joinArgs(kc, []string{"snapshot", "rec-node", "--out", snap}, local)...); err != nil {
		t.Fatalf("snapshot --local: %v\n%s", err, stderr)
	}
	f, err := os.Open(filepath.Join(snap, FileCgroups))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cg, err := ParseCgroupSamples(f, FileCgroups); err != nil || len(cg.Samples) != 1 || len(cg.Samples[0].Pods) != 3 {
		t.Errorf("snapshot --local %s: %+v (%v), want one read of the fixture's 3 pods", FileCgroups, cg, err)
	}

	for _, tc := range []struct{ args, want []string }{
		{[]string{"record", "rec-node", "--local-every", "50ms", "--out", t.TempDir() + "/a"}, []string{"--local-every 50ms: only with --local"}},
		{joinArgs([]string{"record", "rec-node", "--local-every", "1ms", "--out", t.TempDir() + "/b"}, local), []string{"--local-every 1ms: at least 10ms"}},
		{[]string{"snapshot", "rec-node", "--local", "--cgroup-root", "testdata/local/missing", "--out", t.TempDir() + "/c"},
			[]string{"--local:", "no memory controller"}},
	} {
		_, err := recordCLI(ctx, joinArgs(kc, tc.args)...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want an error with %q", tc.args, err, w)
			}
		}
	}
}

// joinArgs concatenates argument lists.
func joinArgs(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
