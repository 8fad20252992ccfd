package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/source/podfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// fixedStatfs is a nodefs whose free space the test sets (a fixture: statfs itself is tested on the real
// filesystem in internal/source/statfs); the per-pod usage is measured by the real podfs walk.
type fixedStatfs struct {
	mu            sync.Mutex
	blocks, avail uint64 // 4 KiB blocks
}

func (f *fixedStatfs) Statfs(string) (statfs.Stat, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return statfs.Stat{Bavail: f.avail, Blocks: f.blocks, Frsize: 4096, Ffree: 1 << 20, Files: 1 << 21, Dev: 1}, nil
}

func (f *fixedStatfs) set(availBytes int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.avail = uint64(availBytes / 4096)
}

// diskHarness is the agent over the cgroup fixture plus a kubelet root dir in a temporary directory:
// each pod writes a real file of the given size into its emptyDir "data".
type diskHarness struct {
	*harness
	root string
	fs   *fixedStatfs
}

func newDiskHarness(t *testing.T) *diskHarness {
	h := newHarness(t, func(s *Settings) { s.Headroom = policy.Headroom{} })
	dh := &diskHarness{harness: h, root: t.TempDir(), fs: &fixedStatfs{blocks: (1 << 30) / 4096}}
	src := h.tree.node()
	src.Disk = &statfs.Reader{NodefsPath: dh.root, Statfser: dh.fs}
	src.PodFS = &podfs.Reader{KubeletRootDir: dh.root, MinInterval: -1}
	h.agent.Source = src
	// nodefs.available<10% of 1Gi; the minimum reclaim small enough for this small filesystem.
	cfg, err := threshold.ParseConfig(threshold.Input{EvictionHardSet: true,
		EvictionHard:           map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"},
		EvictionMinimumReclaim: map[string]string{"nodefs.available": "1Mi"}})
	if err != nil {
		t.Fatal(err)
	}
	h.agent.KubeletConfig = cfg
	return dh
}

// write makes pod uid's emptyDir "data" hold size bytes.
func (dh *diskHarness) write(uid string, size int) {
	dir := filepath.Join(dh.root, "pods", uid, "volumes", "kubernetes.io~empty-dir", "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		dh.tree.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), make([]byte, size), 0o644); err != nil {
		dh.tree.t.Fatal(err)
	}
}

func withEmptyDir(p *corev1.Pod) {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
}

// The defect: at 8% free with 5 pods the agent evicted 3 in the first sync and all 5 within 11 s,
// in name order. Now each pod's emptyDir is measured: the biggest writer goes, one per sync, its usage
// credited while it is in flight, and no more than the need.
func TestDiskPressureEvictsTheBiggestWriterOnePerSyncAndNoMoreThanTheNeed(t *testing.T) {
	dh := newDiskHarness(t)
	var pods []*corev1.Pod
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		uid := "u-" + name
		pods = append(pods, pod(name, uid, "besteffort", "", withEmptyDir))
		dh.tree.setPod(uid, "besteffort", 10*mi)
		dh.write(uid, (4+i*4)<<20) // a 4Mi ... e 20Mi
	}
	dh.pods.set(pods...)
	dh.fs.set(86 * mi) // 8.4% of 1Gi free; the goal 10% + 1Mi is 103.4Mi: need about 17Mi
	res := dh.sync(time.Second)
	if d := cmp.Diff(dh.ladder.names(), []string{"e"}); d != "" {
		t.Fatalf("first sync evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
	for i := 0; i < 5; i++ { // e is in flight (the fixture's disk does not change): its 20Mi are credited
		res = dh.sync(2 * time.Second)
	}
	if d := cmp.Diff(dh.ladder.names(), []string{"e"}); d != "" {
		t.Errorf("evicted within 11 s (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

// fixedImages is the node's status.images as a test sets it (the API listing is the shell's; the
// estimate is kubeconv.UnusedImageBytes, tested there).
type fixedImages struct {
	images []corev1.ContainerImage
	at     time.Time
}

func (f *fixedImages) Latest() ([]corev1.ContainerImage, time.Time, bool) {
	return f.images, f.at, !f.at.IsZero()
}

// Reclaim before evicting: on one filesystem the kubelet deletes unused images before it evicts. While
// the node's unused images could free what is needed, the agent evicts nothing; once they are gone (the
// kubelet's image GC ran) and the disk is still short, the biggest writer goes.
func TestDiskPressureWaitsForTheImageGCWhenUnusedImagesCouldFreeTheNeed(t *testing.T) {
	dh := newDiskHarness(t)
	images := &fixedImages{images: []corev1.ContainerImage{{Names: []string{"pressure.local/unused:v1"}, SizeBytes: 200 * mi}}, at: t0}
	dh.agent.Images = images
	dh.pods.set(pod("a", "u-a", "besteffort", "", withEmptyDir), pod("b", "u-b", "besteffort", "", withEmptyDir))
	dh.tree.setPod("u-a", "besteffort", 10*mi)
	dh.tree.setPod("u-b", "besteffort", 10*mi)
	dh.write("u-a", 30<<20)
	dh.write("u-b", 4<<20)
	dh.fs.set(86 * mi) // need about 17Mi; 200Mi of unused images
	res := dh.sync(time.Second)
	if n := dh.ladder.names(); len(n) != 0 {
		t.Fatalf("evicted %v while unused images could free the need\ntrace:\n%s", n, res.trace())
	}
	images.images, images.at = nil, t0.Add(2*time.Second) // the image GC deleted them; the disk is still short
	res = dh.sync(2 * time.Second)
	if d := cmp.Diff(dh.ladder.names(), []string{"a"}); d != "" {
		t.Errorf("evicted after the image GC (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

// The chart's default kubeletRootDir is an empty directory (statfs only): no pods directory, so the
// per-pod disk usage is not measured (said once at start) rather than failing every sync.
func TestPodFSOnlyWhereTheKubeletsPodsDirectoryIsVisible(t *testing.T) {
	root := t.TempDir()
	var logged strings.Builder
	r := &runner{cfg: Config{NodefsPath: root, PodLogsDir: "/var/log/pods"}, log: slog.New(slog.NewTextHandler(&logged, nil))}
	if got := r.podFS(); got != nil {
		t.Errorf("podFS %+v without a pods directory, want nil", got)
	}
	if !strings.Contains(logged.String(), "per-pod disk usage not measured") {
		t.Errorf("log %q, want the reason said", logged.String())
	}
	if err := os.Mkdir(filepath.Join(root, "pods"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := r.podFS(); got == nil || got.KubeletRootDir != root || got.PodLogsDir != "/var/log/pods" {
		t.Errorf("podFS %+v, want the kubelet root dir and the pod logs dir", got)
	}
}

// failed is a pod the kubelet has stopped after an eviction: phase Failed, deletion under way.
func failed(p *corev1.Pod) {
	terminating(p)
	p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
}

// Seen on the real node with the chart-installed agent: an evicted pod is Failed (its containers stopped)
// before the kubelet has removed its emptyDir, and it stays listed until then. Dropping it from the
// input as not active took away its credit, and in the next 0.6 s both neighbours were evicted for the
// space the writer's files still held. A Failed pod being deleted keeps its credit and is never a victim.
func TestAFailedPodStillBeingDeletedKeepsItsDiskCredit(t *testing.T) {
	dh := newDiskHarness(t)
	writer := pod("writer", "u-writer", "besteffort", "", withEmptyDir)
	dh.pods.set(writer, pod("small-a", "u-small-a", "besteffort", "", withEmptyDir),
		pod("small-b", "u-small-b", "besteffort", "", withEmptyDir))
	for uid, size := range map[string]int{"u-writer": 40 << 20, "u-small-a": 4 << 20, "u-small-b": 4 << 20} {
		dh.tree.setPod(uid, "besteffort", 10*mi)
		dh.write(uid, size)
	}
	dh.fs.set(86 * mi) // need about 17Mi: the writer's 40Mi cover it
	res := dh.sync(time.Second)
	if d := cmp.Diff(dh.ladder.names(), []string{"writer"}); d != "" {
		t.Fatalf("first sync evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
	dh.tree.removePod("u-writer") // its containers are gone, its emptyDir is still on disk
	dh.pods.set(pod("writer", "u-writer", "besteffort", "", withEmptyDir, failed),
		pod("small-a", "u-small-a", "besteffort", "", withEmptyDir), pod("small-b", "u-small-b", "besteffort", "", withEmptyDir))
	for i := 0; i < 3; i++ {
		res = dh.sync(200 * time.Millisecond)
	}
	if d := cmp.Diff(dh.ladder.names(), []string{"writer"}); d != "" {
		t.Errorf("evicted while the Failed writer's emptyDir still held its space (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

// Issue 30, finding 6: a pod whose disk walk stops at the configured limit is measured as a lower
// bound, said in the log with the pod's UID and counted as pressure_agent_errors_total{stage="pod_disk_walk"}.
func TestAPodDiskWalkStoppedAtItsLimitIsLoggedAndCounted(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pods", "uid-many", "volumes", "kubernetes.io~empty-dir", "scratch")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 1500 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "")
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	r := &runner{cfg: Config{NodefsPath: root, PodDiskWalk: podfs.Limits{MaxEntries: 1000}}, metrics: m,
		log: slog.New(slog.NewTextHandler(&logged, nil))}
	fs := r.podFS()
	fs.MinInterval = -1
	pods, err := fs.Pods(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if v := pods["uid-many"].Volumes; len(v) != 1 || *v[0].InodesUsed != 1001 {
		t.Errorf("volumes %+v, want scratch with 1001 inodes, counted up to the limit (the volume directory and 1000 files)", v)
	}
	if got := counter(reg, "pressure_agent_errors_total", "stage", "pod_disk_walk"); got != 1 {
		t.Errorf("pressure_agent_errors_total{stage=pod_disk_walk} = %v, want 1", got)
	}
	if !strings.Contains(logged.String(), "pod disk usage is a lower bound") || !strings.Contains(logged.String(), "uid-many") ||
		!strings.Contains(logged.String(), "more than 1000 entries") {
		t.Errorf("log %q, want the lower bound said with the pod and the limit", logged.String())
	}
}
