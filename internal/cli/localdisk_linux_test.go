package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/explain"
)

// diskPod is a pod of the fixture node with an emptyDir "data" and a container "app".
func diskPod(name, uid string) corev1.Pod {
	p := fixturePods()[2] // BestEffort
	p.Name, p.UID = name, types.UID(uid)
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	return p
}

// writeFile writes size bytes of real data (allocated blocks, not a sparse file) at path.
func writeFile(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kubeletRoot lays out a kubelet root dir and podLogsDir in a temporary directory, as the kubelet does:
// pods/<uid>/volumes/kubernetes.io~empty-dir/data and <namespace>_<name>_<uid>/app/0.log.
func kubeletRoot(t *testing.T, usage map[string]int) (root, logs string) {
	t.Helper()
	dir := t.TempDir()
	root, logs = filepath.Join(dir, "kubelet"), filepath.Join(dir, "pods-logs")
	for uid, size := range usage {
		writeFile(t, filepath.Join(root, "pods", uid, "volumes", "kubernetes.io~empty-dir", "data", "fill"), size)
		writeFile(t, filepath.Join(logs, "default_pod_"+uid, "app", "0.log"), 4096)
	}
	return root, logs
}

// explain --local measures each pod's emptyDir and logs on the node (podfs, the agent's reader), so with
// a nodefs threshold met the agent's answer is the pod using the most disk; the listing order and the
// name tie-break point elsewhere, and the pod without any measured usage is not taken as using zero.
func TestExplainLocalRanksDiskPressureByThePodsMeasuredUsage(t *testing.T) {
	const bigUID, smallUID = "a0000000-0000-0000-0000-000000000001", "b0000000-0000-0000-0000-000000000002"
	root, logs := kubeletRoot(t, map[string]int{bigUID: 2 << 20, smallUID: 64 << 10})
	cfg := filepath.Join(t.TempDir(), "kubelet.yaml")
	// Met on any disk that is not 99.9% empty; evictionHard replaces the defaults.
	if err := os.WriteFile(cfg, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"evictionHard:\n  nodefs.available: \"99.9%\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := fixtureOptions("cgroupv2-cgroupfs", cfg)
	opts.KubeletRootDir, opts.PodLogsDir = root, logs
	in, err := LocalInput(opts, fixedNow)
	if err != nil {
		t.Fatalf("LocalInput: %v", err)
	}
	AddLocalPods(&in, []corev1.Pod{diskPod("a-small", smallUID), diskPod("z-big", bigUID), diskPod("m-none", "c0000000-0000-0000-0000-000000000003")})
	r := explain.Build(in)
	if r.Pressure == nil || len(r.Pressure.Victims) != 1 {
		t.Fatalf("agent victims %+v, want exactly one (warnings %q)", r.Pressure, r.Warnings)
	}
	if got := r.Pressure.Victims[0].Pod; got != "default/z-big" {
		t.Errorf("agent's victim %s, want default/z-big (2 MiB emptyDir)", got)
	}
	// The kubelet ranks a pod without stats first; the agent never evicts on an unknown usage.
	var order []string
	for _, v := range r.Kubelet.EvictionOrder {
		order = append(order, v.Pod)
	}
	if want := "default/m-none default/z-big default/a-small"; strings.Join(order, " ") != want {
		t.Errorf("kubelet's order %q, want %q", order, want)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "disk usage is not measured") || strings.Contains(w, "logs are not measured") {
			t.Errorf("warning %q, want none about unmeasured disk usage", w)
		}
	}
}

// Without a pods directory under the kubelet root dir, the pods' disk usage is unmeasured and said so:
// absent, not zero.
func TestExplainLocalWithoutPodsDirectorySaysDiskUsageIsNotMeasured(t *testing.T) {
	opts := fixtureOptions("cgroupv2-cgroupfs", "")
	opts.KubeletRootDir, opts.PodLogsDir = t.TempDir(), filepath.Join(t.TempDir(), "missing")
	in, err := LocalInput(opts, fixedNow)
	if err != nil {
		t.Fatalf("LocalInput: %v", err)
	}
	want := "per-pod disk usage is not measured: " + filepath.Join(opts.KubeletRootDir, "pods") + " does not exist"
	if !containsLine(in.Warnings, want) {
		t.Errorf("warnings %q, want one containing %q", in.Warnings, want)
	}
}
