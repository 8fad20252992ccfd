package cgroupfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
)

// podsReference is Reader.Pods built from the general readers (ReadMemory, ReclaimStat, Tasks), as
// Pods read each pod before issue 27.
func podsReference(t *testing.T, r *cgroupfs.Reader) (map[string]signal.PodStats, map[string]string) {
	t.Helper()
	cgs, err := r.Layout.PodCgroups()
	if err != nil {
		t.Fatal(err)
	}
	out, errs := map[string]signal.PodStats{}, map[string]string{}
	for _, cg := range cgs {
		m, err := r.Layout.ReadMemory(cg.Rel)
		if err != nil {
			errs[cg.UID] = err.Error()
			continue
		}
		tc, err := r.Layout.Tasks(cg.Rel)
		if err != nil {
			errs[cg.UID] = err.Error()
			continue
		}
		ms := cgroupfs.ReclaimStat(m.Stat, r.Layout.Version, 4096)
		out[cg.UID] = signal.PodStats{UID: cg.UID, Time: now, MemoryWorkingSet: signal.Uint64(m.WorkingSet()), Memory: &ms,
			ProcessCount: signal.Uint64(tc.Processes), ThreadCount: tc.Threads}
	}
	return out, errs
}

func TestPodsGiveTheGeneralReadersStats(t *testing.T) {
	for _, tc := range []struct {
		name, fixture, file, content string
	}{
		{name: "v1 captured tree", fixture: "cgroupv1-cgroupfs"},
		{name: "v2 systemd captured tree", fixture: "cgroupv2-systemd"},
		{name: "v2 cgroupfs captured tree", fixture: "cgroupv2-cgroupfs"},
		{name: "v1 memory.stat with the pre-5.9 workingset names and no dirty", fixture: "cgroupv1-cgroupfs",
			file:    "memory/kubepods/pod11111111-2222-3333-4444-555555555555/memory.stat",
			content: "total_inactive_file 10\ntotal_active_file 20\ntotal_workingset_refault 3\ntotal_workingset_activate 4\n"},
		{name: "v1 memory.stat with both workingset names prefers _file", fixture: "cgroupv1-cgroupfs",
			file:    "memory/kubepods/pod11111111-2222-3333-4444-555555555555/memory.stat",
			content: "total_workingset_refault 3\ntotal_inactive_file 10\ntotal_workingset_refault_file 5\n"},
		{name: "v1 memory.stat without total_inactive_file fails the pod", fixture: "cgroupv1-cgroupfs",
			file: "memory/kubepods/pod11111111-2222-3333-4444-555555555555/memory.stat", content: "total_active_file 20\n"},
		{name: "v1 memory.stat with a malformed reclaim line fails the pod", fixture: "cgroupv1-cgroupfs",
			file: "memory/kubepods/pod11111111-2222-3333-4444-555555555555/memory.stat", content: "total_inactive_file 1\ntotal_dirty x\n"},
		{name: "v1 pod usage garbage fails the pod", fixture: "cgroupv1-cgroupfs",
			file: "memory/kubepods/pod11111111-2222-3333-4444-555555555555/memory.usage_in_bytes", content: "lots\n"},
		{name: "v2 pod memory.stat with shmem and file_dirty", fixture: "cgroupv2-systemd",
			file:    "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod66666666_7777_8888_9999_aaaaaaaaaaaa.slice/memory.stat",
			content: "anon 1\ninactive_file 7\nfile_dirty 8\nfile_writeback 9\nshmem 10\nworkingset_activate_file 11\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyFixture(t, tc.fixture)
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(root, tc.file), []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := &cgroupfs.Reader{Layout: detect(t, root), PageSize: 4096}
			want, wantErrs := podsReference(t, r)
			got, err := r.Pods(now)
			if d := cmp.Diff(got, want); d != "" {
				t.Errorf("Pods() (-got +want):\n%s", d)
			}
			for uid, e := range wantErrs {
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pod %s: %s", uid, e)) {
					t.Errorf("Pods() error %v, want it to hold %q", err, e)
				}
			}
			if len(wantErrs) == 0 && err != nil {
				t.Errorf("Pods() error %v, want none", err)
			}
		})
	}
}
