package source_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/podfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// A pod found in the cgroup tree and on disk gets its measured volumes and logs next to its memory; a
// pod found only on disk (its volumes outlive its cgroup) gets an entry with the disk parts alone.
func TestSnapshotMergesTheMeasuredDiskUsageIntoThePodsStats(t *testing.T) {
	root, logs := t.TempDir(), t.TempDir()
	const cgroupPod = "11111111-2222-3333-4444-555555555555"
	for _, p := range []string{
		filepath.Join(root, "pods", cgroupPod, "volumes", "kubernetes.io~empty-dir", "data", "f"),
		filepath.Join(root, "pods", "disk-only", "volumes", "kubernetes.io~empty-dir", "data", "f"),
		filepath.Join(logs, "ns_a_"+cgroupPod, "app", "0.log"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 64<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := &source.Node{
		Proc:   procfs.NewReader("procfs/testdata/proc-k6.18.44"),
		Cgroup: &cgroupfs.Reader{Layout: layout(t, "cgroupfs/testdata/cgroupv2-cgroupfs")},
		PodFS:  &podfs.Reader{KubeletRootDir: root, PodLogsDir: logs},
	}
	s, _ := n.Snapshot(now)
	p, ok := s.Pods[cgroupPod]
	if !ok || p.MemoryWorkingSet == nil {
		t.Fatalf("pod %s: %+v, want its cgroup stats kept", cgroupPod, p)
	}
	if len(p.Volumes) != 1 || p.Volumes[0].Name != "data" || *p.Volumes[0].UsedBytes < 64<<10 {
		t.Errorf("volumes %+v, want data with its 64 KiB", p.Volumes)
	}
	var logged []string
	for _, c := range p.Containers {
		if c.LogsUsed != nil {
			logged = append(logged, c.Name)
		}
	}
	if d := cmp.Diff(logged, []string{"app"}); d != "" {
		t.Errorf("containers with measured logs (-got +want):\n%s", d)
	}
	d, ok := s.Pods["disk-only"]
	if !ok || d.MemoryWorkingSet != nil || len(d.Volumes) != 1 || !d.Time.Equal(now) {
		t.Errorf("disk-only pod %+v: want an entry with its volume alone, measured now", d)
	}
}

func TestMergeDiskKeepsTheCgroupPartsAndReplacesTheDiskParts(t *testing.T) {
	ws := uint64(10)
	p := signal.PodStats{UID: "u", Time: now, MemoryWorkingSet: &ws,
		Containers: []signal.ContainerStats{{Name: "app"}}, Volumes: []signal.VolumeStats{{Name: "old"}}}
	d := signal.PodStats{UID: "u", Time: now.Add(-3e9), Volumes: []signal.VolumeStats{{Name: "data", UsedBytes: signal.Uint64(5)}},
		Containers: []signal.ContainerStats{{Name: "app", LogsUsed: signal.Uint64(7)}, {Name: "sidecar", LogsUsed: signal.Uint64(1)}}}
	got := source.MergeDisk(p, d)
	if got.MemoryWorkingSet != &ws || !got.Time.Equal(now) {
		t.Errorf("cgroup parts changed: %+v", got)
	}
	if len(got.Volumes) != 1 || got.Volumes[0].Name != "data" {
		t.Errorf("volumes %+v, want the measured ones only", got.Volumes)
	}
	if len(got.Containers) != 2 || *got.Containers[0].LogsUsed != 7 || got.Containers[1].Name != "sidecar" {
		t.Errorf("containers %+v, want app with 7 bytes of logs and sidecar added", got.Containers)
	}
	if len(p.Containers) != 1 || p.Containers[0].LogsUsed != nil {
		t.Errorf("MergeDisk modified its argument: %+v", p.Containers)
	}
}
