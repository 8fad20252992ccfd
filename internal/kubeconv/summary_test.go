package kubeconv

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kube-pressure/pressure/internal/signal"
)

func loadSummary(t *testing.T, path string) *statsv1alpha1.Summary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s statsv1alpha1.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &s
}

func ts(s string) time.Time {
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return v
}

func TestSnapshotObservations(t *testing.T) {
	snap := Snapshot(loadSummary(t, "testdata/summary-single-fs.json"))
	at := ts("2026-11-29T14:30:01Z")
	obs := func(avail, capacity int64) signal.Observation {
		return signal.Observation{Available: avail, Capacity: capacity, Time: at, Source: signal.SourceSummary}
	}
	want := map[signal.Signal]signal.Observation{
		// capacity = available + working set
		signal.MemoryAvailable:            obs(104857599, 104857599+16374562817),
		signal.AllocatableMemoryAvailable: obs(943718400, 943718400+13442744320),
		signal.NodeFsAvailable:            obs(10737418240, 107374182400),
		signal.NodeFsInodesFree:           obs(300000, 6553600),
		signal.ImageFsAvailable:           obs(10737418240, 107374182400),
		signal.ImageFsInodesFree:          obs(300000, 6553600),
		signal.ContainerFsAvailable:       obs(10737418240, 107374182400),
		signal.ContainerFsInodesFree:      obs(300000, 6553600),
		// maxpid − curproc
		signal.PIDAvailable: obs(4194304-1412, 4194304),
	}
	if diff := cmp.Diff(snap.Observations, want); diff != "" {
		t.Errorf("observations (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(snap.Filesystems, signal.FilesystemLayout{}); diff != "" {
		t.Errorf("imagefs equal to nodefs is a single filesystem (-got +want):\n%s", diff)
	}
}

func TestSnapshotPods(t *testing.T) {
	snap := Snapshot(loadSummary(t, "testdata/summary-single-fs.json"))
	u := signal.Uint64
	want := map[string]signal.PodStats{
		"0b6f5a8e-1d52-4c61-9a0b-5f7a4f1d2e01": {
			UID: "0b6f5a8e-1d52-4c61-9a0b-5f7a4f1d2e01", Namespace: "shop", Name: "api-7d9f8b6c5-x2x9q",
			Time: ts("2026-11-29T14:29:55Z"), MemoryWorkingSet: u(2148532224), ProcessCount: u(14),
			EphemeralStorageUsed: u(2148593664), EphemeralStorageInodes: u(56),
			Containers: []signal.ContainerStats{{Name: "a", MemoryWorkingSet: u(2147483648), RootfsUsed: u(40960),
				RootfsInodes: u(12), LogsUsed: u(1048576), LogsInodes: u(2)}},
			Volumes: []signal.VolumeStats{{Name: "scratch", UsedBytes: u(2147483648), InodesUsed: u(40)},
				{Name: "kube-api-access-7x2lq", UsedBytes: u(12288), InodesUsed: u(3)}},
		},
		"5c3e9a7d-8f21-4b0e-b7c4-2a9d6e3f1c02": {
			UID: "5c3e9a7d-8f21-4b0e-b7c4-2a9d6e3f1c02", Namespace: "jobs", Name: "batch-worker",
			Time: ts("2026-11-29T14:29:58Z"), MemoryWorkingSet: u(315621376), ProcessCount: u(3),
			EphemeralStorageUsed: u(314576896), EphemeralStorageInodes: u(1503),
			Containers: []signal.ContainerStats{{Name: "b", MemoryWorkingSet: u(314572800), RootfsUsed: u(209715200),
				RootfsInodes: u(1500), LogsUsed: u(104857600), LogsInodes: u(1)}},
		},
		"9f1d2c3b-4a5e-4f60-8b7a-1c2d3e4f5a03": {
			UID: "9f1d2c3b-4a5e-4f60-8b7a-1c2d3e4f5a03", Namespace: "default", Name: "just-started",
		},
	}
	if diff := cmp.Diff(snap.Pods, want); diff != "" {
		t.Errorf("pods (-got +want):\n%s", diff)
	}
}

func TestSnapshotPSI(t *testing.T) {
	snap := Snapshot(loadSummary(t, "testdata/summary-single-fs.json"))
	var got []string
	for _, p := range snap.PSI {
		got = append(got, p.Scope+"/"+p.Resource)
	}
	want := []string{"node/cpu", "node/memory", "pods/cpu", "pods/memory"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("PSI records (-got +want):\n%s", diff)
	}
	if p := snap.PSI[1]; p.Some.Avg10 != 1.1 || p.Some.Total != 80100 || p.Full == nil || p.Full.Total != 52000 {
		t.Errorf("node memory PSI = %+v (full %+v), want some avg10 1.1 total 80100, full total 52000", p.Some, p.Full)
	}
}

func TestSnapshotMissingValues(t *testing.T) {
	u := signal.Uint64
	tests := []struct {
		name    string
		summary statsv1alpha1.Summary
		want    []signal.Signal
		layout  signal.FilesystemLayout
	}{
		{"empty summary has no observation", statsv1alpha1.Summary{}, []signal.Signal{}, signal.FilesystemLayout{}},
		{"memory without working set has no observation; fs bytes without inodes gives only bytes",
			statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
				Memory: &statsv1alpha1.MemoryStats{AvailableBytes: u(1)},
				Fs:     &statsv1alpha1.FsStats{AvailableBytes: u(1), CapacityBytes: u(2)}}},
			[]signal.Signal{signal.NodeFsAvailable}, signal.FilesystemLayout{}},
		{"T4 no imageFs in the summary: no imagefs observation",
			statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{Runtime: &statsv1alpha1.RuntimeStats{},
				Rlimit: &statsv1alpha1.RlimitStats{MaxPID: ptr(int64(100))}}},
			[]signal.Signal{}, signal.FilesystemLayout{}},
		{"pods system container without memory gives no allocatable observation",
			statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{SystemContainers: []statsv1alpha1.ContainerStats{{Name: "pods"}}}},
			[]signal.Signal{}, signal.FilesystemLayout{}},
		{"imagefs of another size is dedicated; containerfs differing from imagefs is split",
			statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
				Fs: &statsv1alpha1.FsStats{AvailableBytes: u(5), CapacityBytes: u(10)},
				Runtime: &statsv1alpha1.RuntimeStats{
					ImageFs:     &statsv1alpha1.FsStats{AvailableBytes: u(50), CapacityBytes: u(100)},
					ContainerFs: &statsv1alpha1.FsStats{AvailableBytes: u(5), CapacityBytes: u(10)}}}},
			[]signal.Signal{signal.ContainerFsAvailable, signal.ImageFsAvailable, signal.NodeFsAvailable},
			signal.FilesystemLayout{DedicatedImageFs: true, SplitContainerFs: true}},
		{"imagefs with same capacity but different available is dedicated",
			statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
				Fs:      &statsv1alpha1.FsStats{AvailableBytes: u(5), CapacityBytes: u(10)},
				Runtime: &statsv1alpha1.RuntimeStats{ImageFs: &statsv1alpha1.FsStats{AvailableBytes: u(6), CapacityBytes: u(10)}}}},
			[]signal.Signal{signal.ImageFsAvailable, signal.NodeFsAvailable},
			signal.FilesystemLayout{DedicatedImageFs: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := Snapshot(&tc.summary)
			if diff := cmp.Diff(snap.Signals(), tc.want); diff != "" {
				t.Errorf("observed signals (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(snap.Filesystems, tc.layout); diff != "" {
				t.Errorf("layout (-got +want):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
