package vm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

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
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubelet in the cgroup v2 guest cannot run under CI: "+format, args...)
		}
		t.Skipf("kubelet in the cgroup v2 guest skipped: "+format, args...)
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
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
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

// startNode boots a guest node with opt (Dir, Images and Nice filled in) and stops it in cleanup.
func (p nodeParts) startNode(ctx context.Context, t *testing.T, opt vm.NodeOptions) *vm.Node {
	t.Helper()
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	opt.Images, opt.Nice = p.images, 15
	n, err := p.guest.StartNode(ctx, p.cp, p.init, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest node %s Ready %s after qemu started (logs in %s)", n.Name, n.Boot.Round(time.Second), opt.Dir)
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Error(err)
		}
	})
	return n
}

// raceNode is the node of the OOM races: 2.5 GiB of guest RAM with 1.5 GiB of it kube-reserved, so the
// pods cgroup's limit (node allocatable) is about 0.9 GiB and a ramp reaches it in seconds; the kubelet's
// eviction settings are its defaults (memory.available<100Mi, no memcg notifier on cgroup v2: only its
// 10 s housekeeping).
func raceNode(dir, agent string) vm.NodeOptions {
	return vm.NodeOptions{Dir: dir, MemoryMiB: 2560, Agent: agent,
		KubeletConfig: &kubeletv1beta1.KubeletConfiguration{KubeReserved: map[string]string{"memory": "1536Mi"}}}
}

// TestKubeletOnCgroupV2AgentEvictsTheStressPodBeforeTheOOMKiller boots the kubelet on cgroup v2 in the guest with the
// agent as a process beside it (not installed by the chart), checks the node is Ready on cgroup v2, and
// runs one OOM race at the fastest rate the guest reaches: the agent must evict the stress pod before
// the kernel OOM-kills anything in the pods cgroup.
func TestKubeletOnCgroupV2AgentEvictsTheStressPodBeforeTheOOMKiller(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	p := startParts(ctx, t)
	agent, err := builder(t).Command(ctx, "./cmd/pressure-agent")
	if err != nil {
		t.Fatal(err)
	}
	n := p.startNode(ctx, t, raceNode(t.TempDir(), agent))
	node, err := n.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s: kubelet %s, kernel %s, allocatable memory %s", n.Name, node.Status.NodeInfo.KubeletVersion,
		node.Status.NodeInfo.KernelVersion, node.Status.Allocatable.Memory())
	if got := n.Guest.OutputLines("I"); !containsAny(got, `"CgroupVersion":2`) {
		t.Errorf("the kubelet's container manager did not log CgroupVersion 2")
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
}

func containsAny(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
