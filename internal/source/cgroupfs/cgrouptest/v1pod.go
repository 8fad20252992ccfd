package cgrouptest

import (
	"path/filepath"
	"testing"
)

// V1PodHog builds top/kubepods/burstable/pod<uid> under V1Memory (top a new random cgroup, kubepods
// limited to limit bytes), removed when the test ends, and runs a hog in the pod cgroup that has touched
// alloc bytes when it returns. It returns the top cgroup and the pod's directories. Callers check
// Available first.
func V1PodHog(t testing.TB, uid string, limit, alloc int64) (top, podDir string) {
	top, podDir, _ = V1Pod(t, uid, limit, alloc)
	return top, podDir
}

// V1Pod is V1PodHog that also returns the hog, for a test that frees its memory (Hog.Free).
func V1Pod(t testing.TB, uid string, limit, alloc int64) (top, podDir string, hog *Hog) {
	t.Helper()
	top = filepath.Join(V1Memory, RandomName("pressure-test"))
	podDir = filepath.Join(top, "kubepods", "burstable", "pod"+uid)
	if err := Mkdir(filepath.Join(top, "kubepods"), limit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Remove(top); err != nil {
			t.Errorf("remove %s: %v", top, err)
		}
	})
	if err := Mkdir(podDir, 0); err != nil {
		t.Fatal(err)
	}
	hog, err := StartHog(podDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Close() })
	if err := hog.Alloc(alloc); err != nil {
		t.Fatal(err)
	}
	return top, podDir, hog
}
