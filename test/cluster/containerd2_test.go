package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/images"
)

// TestContainerd2NodeMountsAHostPathRecursivelyReadOnly is level 2: on containerd 2 (built from the Go
// module proxy by hack/build-containerd.sh) with Debian's runc, the node reports recursive read-only
// mounts, and a pod's read-only hostPath of the host's /sys/fs/cgroup with recursiveReadOnly: Enabled
// is read-only in every submount (the cgroup v1 controllers), which containerd 1.6 cannot do: what the
// chart's uid 0 settings (the reclaim rung, the memcg notifier) need to be safe.
func TestContainerd2NodeMountsAHostPathRecursivelyReadOnly(t *testing.T) {
	if p := clustertest.NodeProblem(); p != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	c2 := clustertest.Containerd2(t)
	cp := clustertest.ControlPlane(t)
	clustertest.Node(t, cp, cluster.NodeOptions{Containerd2: c2})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	node, err := c.CoreV1().Nodes().Get(ctx, "pressure-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rro := false
	for _, h := range node.Status.RuntimeHandlers {
		rro = rro || h.Features != nil && ptr.Deref(h.Features.RecursiveReadOnlyMounts, false)
	}
	if !rro {
		t.Fatalf("node runtime handlers %+v: none supports recursive read-only mounts", node.Status.RuntimeHandlers)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rro", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: images.PauseName, ImagePullPolicy: corev1.PullNever,
				VolumeMounts: []corev1.VolumeMount{{Name: "cg", MountPath: "/host/cgroup", ReadOnly: true,
					RecursiveReadOnly: ptr.To(corev1.RecursiveReadOnlyEnabled)}}}},
			Volumes: []corev1.Volume{{Name: "cg", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/sys/fs/cgroup"}}}},
		},
	}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var uid string
	for uid == "" {
		p, err := c.CoreV1().Pods("default").Get(ctx, "rro", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase == corev1.PodRunning {
			uid = string(p.UID)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod not Running: phase %s, conditions %+v, containers %+v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
		case <-time.After(500 * time.Millisecond):
		}
	}
	mounts := containerMounts(t, uid, "/host/cgroup")
	if len(mounts) < 2 {
		t.Fatalf("mounts at or below /host/cgroup in the container: %v, want the cgroup root and its controllers", mounts)
	}
	for target, opts := range mounts {
		if !cluster.ReadOnly(opts) {
			t.Errorf("%s is mounted %s in the container, want ro (recursive read-only)", target, opts)
		}
	}
	t.Logf("%d mounts below /host/cgroup, all read-only", len(mounts))
}

// containerMounts returns the mount points at or below prefix, with their per-mount options, in the
// mount namespace of the process of pod uid that has any (the container's, not the sandbox's), found in
// the pod's cgroups of the v1 memory controller.
func containerMounts(t *testing.T, uid, prefix string) map[string]string {
	t.Helper()
	var pids []int
	_ = filepath.WalkDir("/sys/fs/cgroup/memory/kubepods", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || !strings.Contains(path, "pod"+uid) {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil && n > 0 {
				pids = append(pids, n)
			}
		}
		return nil
	})
	for _, pid := range pids {
		m, err := cluster.MountsBelow(pid, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 {
			return m
		}
	}
	t.Fatalf("no process of pod %s (%v) has a mount at %s", uid, pids, prefix)
	return nil
}
