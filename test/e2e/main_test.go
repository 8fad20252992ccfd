package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/evictaudit"
)

// env is the package's one cluster, set up by TestMain. skip is why the tests cannot run.
type env struct {
	cp     *cluster.ControlPlane
	node   *cluster.Node
	client kubernetes.Interface
	// podsLimit is the pods cgroup memory limit the node was configured for.
	podsLimit resource.Quantity
	skip      string
	// auditLog is the API server's audit log of eviction requests and of every write of pods, nodes,
	// ConfigMaps and admission objects (test/evictaudit.BothArgs).
	auditLog string
}

var shared env

// Eviction configuration of the package node: pods get podsLimit bytes in total
// (kubeReserved = MemTotal - podsLimit) and the kubelet evicts when less than
// evictionThreshold of it is left.
const (
	podsLimitBytes    = 2 << 30
	evictionThreshold = "200Mi"
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if reason := clustertest.NodeProblem(); reason != "" {
		shared.skip = reason
		return m.Run()
	}
	bins, err := cluster.FindBinaries(mustRepo())
	if errors.Is(err, cluster.ErrNotBuilt) && (clustertest.InCI() || os.Getenv("PRESSURE_BUILD") == "1") {
		bins, err = cluster.BuildBinaries(mustRepo(), os.Stderr)
	}
	if err != nil {
		shared.skip = fmt.Sprintf("%v; build them with `hack/build-k8s.sh`", err)
		return m.Run()
	}
	// The node runs containerd 2: the chart's uid 0 settings (the reclaim rung) need recursive read-only
	// mounts, which Debian's containerd 1.6 cannot make (test/deploy and test/e2edisk run on 1.6).
	c2, err := cluster.FindContainerd2(context.Background(), mustRepo())
	if errors.Is(err, cluster.ErrNotBuilt) && (clustertest.InCI() || os.Getenv("PRESSURE_BUILD") == "1") {
		c2, err = cluster.BuildContainerd2(context.Background(), mustRepo(), os.Stderr)
	}
	if err != nil {
		shared.skip = fmt.Sprintf("%v; build it with `hack/build-containerd.sh`", err)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "pressure-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Generous: StartNode first waits for the machine-wide node lock, which another test
	// package's node may hold for many minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	// An interrupted `go test` must not leak the daemons: stop them, then exit.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping the cluster (logs in %s)\n", sig, dir)
		cancel()
		stop()
		os.Exit(1)
	}()
	if err := start(ctx, bins, &c2, dir); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: start cluster (logs in %s): %v\n", dir, err)
		stop()
		return 1
	}
	code := m.Run()
	stop()
	if code == 0 && !cluster.HasMountsUnder(dir) {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: cluster logs kept in %s\n", dir)
	}
	return code
}

func start(ctx context.Context, bins cluster.Binaries, c2 *cluster.Containerd2, dir string) error {
	t0 := time.Now()
	audit, auditLog, err := evictaudit.BothArgs(dir)
	if err != nil {
		return err
	}
	cp, err := cluster.StartControlPlane(ctx, cluster.ControlPlaneOptions{Binaries: bins, Dir: dir, ExtraAPIServerArgs: audit})
	if err != nil {
		return err
	}
	shared.cp, shared.auditLog = cp, auditLog
	t1 := time.Now()
	memTotal, err := memTotalBytes()
	if err != nil {
		return err
	}
	shared.podsLimit = *resource.NewQuantity(podsLimitBytes, resource.BinarySI)
	kubeReserved := *resource.NewQuantity(memTotal-podsLimitBytes, resource.BinarySI)
	cfg := &kubeletv1beta1.KubeletConfiguration{
		KubeReserved:                     map[string]string{"memory": kubeReserved.String()},
		EnforceNodeAllocatable:           []string{"pods"},
		KernelMemcgNotification:          true,
		EvictionHard:                     map[string]string{"memory.available": evictionThreshold, "allocatableMemory.available": evictionThreshold},
		EvictionPressureTransitionPeriod: metav1.Duration{Duration: 20 * time.Second},
	}
	node, err := cluster.StartNode(ctx, cp, cluster.NodeOptions{KubeletConfig: cfg, Containerd2: c2})
	if err != nil {
		return err
	}
	shared.node = node
	fmt.Fprintf(os.Stderr, "e2e: control plane ready in %s, node %s Ready in %s more (kubelet config %s)\n",
		t1.Sub(t0).Round(time.Millisecond), node.Name(), time.Since(t1).Round(time.Millisecond), node.KubeletConfigPath())
	shared.client, err = cp.Client()
	return err
}

func stop() {
	if shared.node != nil {
		if err := shared.node.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
		}
	}
	if shared.cp != nil {
		if err := shared.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
		}
	}
}

// requireNode skips (or fails under CI=true) when the package could not start its node.
func requireNode(t *testing.T) *env {
	t.Helper()
	if shared.skip != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", shared.skip)
	}
	return &shared
}

func mustRepo() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	repo, err := cluster.RepoRoot(wd)
	if err != nil {
		panic(err)
	}
	return repo
}

// memTotalBytes reads MemTotal from /proc/meminfo, the kubelet's memory capacity on cgroup v1.
func memTotalBytes() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read meminfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemTotal %q: %w", fields[1], err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("/proc/meminfo: no MemTotal line")
}
