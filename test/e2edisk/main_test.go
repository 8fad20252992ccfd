package e2edisk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/evictaudit"
)

type env struct {
	cp     *cluster.ControlPlane
	node   *cluster.Node
	client kubernetes.Interface
	skip   string
	// auditLog is the API server's audit log of eviction requests (test/evictaudit).
	auditLog string
}

var shared env

// The node's nodefs: 256 MiB, and the kubelet's defaults for it (nodefs.available<10%); its imagefs
// (containerd's root): 512 MiB (imagefs.available<15%).
const (
	nodefsSize  = 256 << 20
	imagefsSize = 512 << 20
)

// kubeletPIDMargin: the kubelet's pid.available threshold is set this many tasks below what is available
// when the package starts (pid.available is node-wide; the machine's own tasks move by a few hundred).
const kubeletPIDMargin = 6000

// pidThreshold is the kubelet's pid.available threshold of the package node.
var pidThreshold int64

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	if reason := clustertest.NodeProblem(); reason != "" {
		shared.skip = reason
		return m.Run()
	}
	wd, _ := os.Getwd()
	repo, err := cluster.RepoRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bins, err := cluster.FindBinaries(repo)
	if errors.Is(err, cluster.ErrNotBuilt) && clustertest.InCI() {
		bins, err = cluster.BuildBinaries(repo, os.Stderr)
	}
	if err != nil {
		shared.skip = fmt.Sprintf("%v; build them with `hack/build-k8s.sh`", err)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "pressure-e2edisk-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	code := 1
	if err := start(ctx, bins, dir); err != nil {
		fmt.Fprintf(os.Stderr, "e2edisk: start cluster (logs in %s): %v\n", dir, err)
	} else {
		code = m.Run()
	}
	stop()
	if code == 0 && !cluster.HasMountsUnder(dir) {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "e2edisk: cluster logs kept in %s\n", dir)
	}
	return code
}

func start(ctx context.Context, bins cluster.Binaries, dir string) error {
	audit, auditLog, err := evictaudit.Args(dir)
	if err != nil {
		return err
	}
	cp, err := cluster.StartControlPlane(ctx, cluster.ControlPlaneOptions{Binaries: bins, Dir: dir, ExtraAPIServerArgs: audit})
	if err != nil {
		return err
	}
	shared.cp, shared.auditLog = cp, auditLog
	avail, _, err := pidAvailable()
	if err != nil {
		return err
	}
	pidThreshold = avail - kubeletPIDMargin
	cfg := &kubeletv1beta1.KubeletConfiguration{
		EvictionHard: map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
			"imagefs.available": "15%", "imagefs.inodesFree": "5%", "pid.available": strconv.FormatInt(pidThreshold, 10)},
		EvictionPressureTransitionPeriod: metav1.Duration{Duration: 20 * time.Second},
		// The image GC may delete an image a second after its import (TestUnusedImagesFillingImagefsEvictNoPod).
		ImageMinimumGCAge: metav1.Duration{Duration: time.Second},
	}
	node, err := cluster.StartNode(ctx, cp, cluster.NodeOptions{KubeletConfig: cfg, KubeletRootFS: &cluster.LoopFS{Size: nodefsSize},
		ContainerdRootFS: &cluster.LoopFS{Size: imagefsSize}})
	if err != nil {
		return err
	}
	shared.node = node
	shared.client, err = cp.Client()
	return err
}

func stop() {
	if shared.node != nil {
		if err := shared.node.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2edisk:", err)
		}
	}
	if shared.cp != nil {
		if err := shared.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2edisk:", err)
		}
	}
}

func requireNode(t *testing.T) *env {
	t.Helper()
	if shared.skip != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", shared.skip)
	}
	return &shared
}

// pidAvailable is the kubelet's pid.available: min(pid_max, threads-max) minus the tasks of
// /proc/loadavg, and that capacity.
func pidAvailable() (avail, capacity int64, err error) {
	read := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		return strings.TrimSpace(string(b)), err
	}
	var vals []int64
	for _, p := range []string{"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"} {
		s, err := read(p)
		if err != nil {
			return 0, 0, err
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", p, err)
		}
		vals = append(vals, v)
	}
	la, err := read("/proc/loadavg")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(la)
	if len(f) < 4 {
		return 0, 0, fmt.Errorf("/proc/loadavg %q: no tasks field", la)
	}
	_, tasks, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0, 0, fmt.Errorf("/proc/loadavg %q: no tasks field", la)
	}
	n, err := strconv.ParseInt(tasks, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/loadavg: %w", err)
	}
	capacity = min(vals[0], vals[1])
	return capacity - n, capacity, nil
}
