package vm_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

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
