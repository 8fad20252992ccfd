package vm_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kube-pressure/pressure/internal/testenv"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/images"
	"github.com/kube-pressure/pressure/test/vm"
)

// nodeParts are what a kubelet in the guest needs besides the guest: the control plane on the host (its
// binaries from hack/build-k8s.sh), the test images and the host's containerd and runc.
type nodeParts struct {
	guest  vm.Guest
	cp     *cluster.ControlPlane
	images []images.Image
	init   string
}

// startParts starts the control plane and builds the guest init and the images, or skips with the reason
// (fails under CI=true).
func startParts(ctx context.Context, t *testing.T) nodeParts {
	t.Helper()
	g := guest(t)
	missing := func(format string, args ...any) {
		t.Helper()
		testenv.SkipOrFail(t, "kubelet in the cgroup v2 guest cannot run: "+format, args...)
	}
	for _, b := range []string{"/usr/bin/containerd", "/usr/bin/containerd-shim-runc-v2", "/usr/bin/ctr", "/usr/sbin/runc"} {
		if _, err := os.Stat(b); err != nil {
			missing("%v (hack/install-node-deps.sh)", err)
		}
	}
	bins, err := cluster.FindBinaries(moduleRoot(t))
	if err != nil {
		missing("%v (hack/build-k8s.sh)", err)
	}
	cp, err := cluster.StartControlPlane(ctx, cluster.ControlPlaneOptions{Binaries: bins, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	timedCleanup(t, "control plane stopped", cp.Stop)
	imgs, err := images.BuildAll(ctx, filepath.Join(cluster.CacheDir(), "images"))
	if err != nil {
		t.Fatal(err)
	}
	initBin, err := builder(t).Init(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return nodeParts{guest: g, cp: cp, images: imgs, init: initBin}
}

// startNode boots a guest node with opt (Dir and Images filled in when empty, qemu niced) and stops it in
// cleanup.
func (p nodeParts) startNode(ctx context.Context, t *testing.T, opt vm.NodeOptions) *vm.Node {
	t.Helper()
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	if opt.Images == nil {
		opt.Images = p.images
	}
	opt.Nice = 15
	n, err := p.guest.StartNode(ctx, p.cp, p.init, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest node %s Ready %s after qemu started (logs in %s)", n.Name, n.Boot.Round(time.Second), opt.Dir)
	timedCleanup(t, "guest node stopped", n.Stop)
	return n
}

// timedCleanup runs stop when t ends, reports its error and logs "<what> in <time>": where a test's
// teardown goes (issue 31).
func timedCleanup(t *testing.T, what string, stop func() error) {
	t.Cleanup(func() {
		start := time.Now()
		if err := stop(); err != nil {
			t.Error(err)
		}
		t.Logf("%s in %s", what, time.Since(start).Round(100*time.Millisecond))
	})
}

// raceNode is the node of the OOM races: 2.5 GiB of guest RAM with 1.5 GiB of it kube-reserved, so the
// pods cgroup's limit (node allocatable) is about 0.9 GiB and a ramp reaches it in seconds; the kubelet's
// eviction settings are its defaults (memory.available<100Mi, no memcg notifier on cgroup v2: only its
// 10 s housekeeping).
func raceNode(dir, agent string) vm.NodeOptions {
	return vm.NodeOptions{Dir: dir, MemoryMiB: 2560, Agent: agent,
		KubeletConfig: &kubeletv1beta1.KubeletConfiguration{KubeReserved: map[string]string{"memory": "1536Mi"}}}
}

// TestKubeletOnCgroupV2ChartAgentEvictsTheStressPodBeforeTheOOMKiller boots the kubelet on cgroup v2 in the
// guest with a pod network, installs the agent with the Helm chart (its image imported at boot), checks
// the node is Ready on cgroup v2 and the agent armed its v2 notifiers, and runs one OOM race at the
// fastest rate the guest reaches: the agent must evict the stress pod before the kernel OOM-kills anything
// in the pods cgroup.
func TestKubeletOnCgroupV2ChartAgentEvictsTheStressPodBeforeTheOOMKiller(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p := startParts(ctx, t)
	c := buildChartParts(ctx, t)
	opt := raceNode(t.TempDir(), "")
	opt.PodNetwork = true
	opt.Images = append(slices.Clone(p.images), c.images...)
	n := p.startNode(ctx, t, opt)
	node, err := n.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s: kubelet %s, kernel %s, allocatable memory %s", n.Name, node.Status.NodeInfo.KubeletVersion,
		node.Status.NodeInfo.KernelVersion, node.Status.Allocatable.Memory())
	if !containsAny(n.Guest.OutputLines("I"), `"CgroupVersion":2`) {
		t.Errorf("the kubelet's container manager did not log CgroupVersion 2")
	}
	c.installForTest(ctx, t, p, n)
	started := waitLine(ctx, t, n, `"msg":"pressure-agent started"`)
	for _, want := range []string{"psi(", "memory.events(/host/sys/fs/cgroup/kubepods/memory.events)", "poll("} {
		if !strings.Contains(started, want) {
			t.Errorf("the agent did not arm %s on cgroup v2: %s", want, started)
		}
	}
	r, err := n.Race(ctx, "race", "0", 3*time.Minute)
	t.Logf("race: %s", r)
	if err != nil {
		t.Fatal(err)
	}
	if r.PeakMiB < 200 {
		t.Errorf("the pods cgroup of the guest's cgroup2 (/sys/fs/cgroup/kubepods) peaked at %.0f MiB, want the stress pod's ramp in it", r.PeakMiB)
	}
	if r.Evictor != "agent" {
		t.Errorf("evictor %s, want the agent", r.Evictor)
	}
	if r.OOMKills != 0 || r.OOMKilled {
		t.Errorf("kernel OOM kills in the pods cgroup %d, stress OOMKilled %v; want none", r.OOMKills, r.OOMKilled)
	}
	if !slices.Equal(r.Evicted, []string{"agent:stress"}) || !slices.Equal(r.Survivors, vm.Neighbours) {
		t.Errorf("evicted %v, survivors %v; want only the stress pod evicted (by the agent) and %v Running", r.Evicted, r.Survivors, vm.Neighbours)
	}
	// The benchmark's latency figure must be measurable here (its value is the benchmark's to report): the
	// agent's evict line and the watcher's lines are there. A watcher that looked later than the agent (a
	// busy guest) leaves a run without a figure, which is not the machinery's failure.
	if r.Evictor == "agent" && r.LatencyWhy != "" && !strings.HasPrefix(r.LatencyWhy, vm.NoCrossingSampled) {
		t.Errorf("no crossing → request figure from the guest's watcher and the agent's evict line: %s", r.LatencyWhy)
	}
	if n.AvailSamples() == 0 {
		t.Errorf("the guest's watcher printed no sample of the pods cgroup's allocatable available memory")
	}
}

// waitLine waits for a line holding s on the guest's ttyS1 (the chart agent's log is tailed there).
func waitLine(ctx context.Context, t *testing.T, n *vm.Node, s string) string {
	t.Helper()
	for {
		for _, l := range n.Guest.OutputLines("") {
			if strings.Contains(l, s) {
				return l
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s on the guest's output: %v", s, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func containsAny(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
