package e2edisk

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/images"
)

// imagefs returns the available and total bytes of containerd's root (the package node's imagefs).
func imagefs(t *testing.T, e *env) (avail, capacity int64) {
	t.Helper()
	var fs unix.Statfs_t
	if err := unix.Statfs(e.node.ContainerdRoot(), &fs); err != nil {
		t.Fatal(err)
	}
	return int64(fs.Bavail) * fs.Frsize, int64(fs.Blocks) * fs.Frsize
}

// importFiller imports an image named name whose one layer is size bytes of incompressible data (on
// imagefs about twice that: the compressed blob and its unpacked snapshot). No pod uses it.
func importFiller(ctx context.Context, t *testing.T, e *env, name string, size int64, seed int64) {
	t.Helper()
	data := make([]byte, size)
	rand.New(rand.NewSource(seed)).Read(data)
	tarball := filepath.Join(t.TempDir(), "filler.tar")
	f, err := os.Create(tarball)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := images.WriteSingleBinaryImage(f, name, "/filler", data, runtime.GOARCH, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.node.ImportImage(ctx, name, tarball); err != nil {
		t.Fatal(err)
	}
}

// waitListed waits until the Node's status.images lists name (the kubelet's image list, the agent's
// estimate of unused images).
func waitListed(ctx context.Context, t *testing.T, e *env, name string) {
	t.Helper()
	for {
		n, err := e.client.CoreV1().Nodes().Get(ctx, e.node.Name(), metav1.GetOptions{})
		if err == nil {
			for _, img := range n.Status.Images {
				for _, nm := range img.Names {
					if nm == name {
						return
					}
				}
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("node status does not list %s", name)
		}
		time.Sleep(time.Second)
	}
}

// An image filesystem filled by unused images only: reclaim first. The first fillers (unused, listed in
// the node's status.images) take imagefs close to the threshold; the last one crosses it. The agent's
// estimate says the kubelet's image GC could free what is needed, so it evicts nothing; the kubelet's
// eviction manager runs the image GC (imageMinimumGCAge 1s on this node) and imagefs comes back. What
// the kubelet evicts is recorded, not asserted: in the first run (2026-12-03) it evicted a neighbour
// although its own image GC had already freed the space (docs/benchmarks.md). Runs last: the image GC
// could delete an image no pod uses.
func TestUnusedImagesFillingImagefsEvictNoPod(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := namespace(ctx, t, e, "images")
	for _, n := range []string{"small-a", "small-b"} {
		if _, err := e.client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, n, "0", "1Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitState(ctx, t, e, ns, "running", "small-a", "small-b")
	startAgent(t, e)
	avail0, capacity := imagefs(t, e)
	threshold := capacity * 15 / 100 // the kubelet's imagefs.available<15%; no headroom there (the image GC start)
	t.Logf("imagefs: %d of %d bytes available; threshold about %d", avail0, capacity, threshold)
	// Fill to about 40 MiB above the threshold; the bytes on imagefs per byte of layer (blob and
	// snapshot: about 2) are measured on the first filler.
	perByte, a1 := 2.0, avail0
	for i, name := range []string{"pressure.local/filler-a:v1", "pressure.local/filler-b:v1"} {
		size := int64(float64(a1-threshold-40<<20) / perByte)
		if size < 8<<20 {
			break
		}
		importFiller(ctx, t, e, name, size, int64(i+1))
		a, _ := imagefs(t, e)
		if i == 0 {
			perByte = float64(a1-a) / float64(size)
		}
		t.Logf("filler %s: %d bytes, imagefs %d bytes available (%.2f bytes per byte of layer)", name, size, a, perByte)
		a1 = a
		waitListed(ctx, t, e, name)
	}
	time.Sleep(35 * time.Second) // the agent reads the node's images every 30 s
	importFiller(ctx, t, e, "pressure.local/filler-c:v1", int64(70<<20/perByte), 3)
	var crossed, recovered time.Time
	lowest := a1
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline) && recovered.IsZero(); time.Sleep(200 * time.Millisecond) {
		a, _ := imagefs(t, e)
		lowest = min(lowest, a)
		switch {
		case crossed.IsZero() && a < threshold:
			crossed = time.Now()
		case !crossed.IsZero() && a >= threshold:
			recovered = time.Now()
		}
	}
	if crossed.IsZero() {
		t.Fatalf("imagefs never crossed the threshold %d (lowest %d)", threshold, lowest)
	}
	if recovered.IsZero() {
		t.Errorf("imagefs still below the threshold 90 s after crossing it (lowest %d): the image GC did not reclaim", lowest)
	} else {
		t.Logf("crossed at %s, back above the threshold %s later (the kubelet's image GC); lowest available %d",
			crossed.Format(time.RFC3339Nano), recovered.Sub(crossed).Round(100*time.Millisecond), lowest)
	}
	time.Sleep(15 * time.Second) // a kubelet sync, several agent syncs
	byAgent, byKubelet := evictions(ctx, t, e, ns)
	if len(byAgent) != 0 {
		t.Errorf("agent evictions %v: want none (the unused images could free the need: reclaim first)", byAgent)
	}
	t.Logf("kubelet evictions (recorded, not asserted): %v; neighbours: small-a %s, small-b %s", byKubelet,
		podState(ctx, e, ns, "small-a"), podState(ctx, e, ns, "small-b"))
}
