package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkAgentIsNonRootBehindReadOnlyMounts finds the agent container's process on this host (by its
// container ID in /proc/PID/cgroup) and checks, from the kernel's own view, that it runs as a non-root
// user with no effective capability and that its host cgroup mount is read-only.
func checkAgentIsNonRootBehindReadOnlyMounts(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	pods, err := c.CoreV1().Pods(releaseNS).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=agent"})
	if err != nil || len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) == 0 {
		t.Fatalf("agent pod: %v (%d pods)", err, len(pods.Items))
	}
	_, id, ok := strings.Cut(pods.Items[0].Status.ContainerStatuses[0].ContainerID, "://")
	if !ok || id == "" {
		t.Fatalf("agent container ID %q", pods.Items[0].Status.ContainerStatuses[0].ContainerID)
	}
	pid, err := pidOfContainer(id)
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	uid, capEff := procField(string(status), "Uid:"), procField(string(status), "CapEff:")
	if f := strings.Fields(uid); len(f) == 0 || f[0] == "0" || f[1] == "0" {
		t.Errorf("agent process %s runs with Uid %q, want a non-root user", pid, uid)
	}
	if strings.Trim(capEff, "0") != "" {
		t.Errorf("agent process %s has effective capabilities %s, want none", pid, capEff)
	}
	mounts, err := os.ReadFile(filepath.Join("/proc", pid, "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	opts, found := mountOptions(string(mounts), "/host/sys/fs/cgroup")
	if !found || !strings.Contains(","+opts+",", ",ro,") {
		t.Errorf("agent process %s: mount /host/sys/fs/cgroup options %q (found %v), want read-only", pid, opts, found)
	}
	t.Logf("agent process %s: Uid %s, CapEff %s, /host/sys/fs/cgroup mounted %s", pid, uid, capEff, opts)
}

// pidOfContainer returns a host PID whose cgroup path names the container ID.
func pidOfContainer(id string) (string, error) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return "", err
	}
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cgroup"))
		if err == nil && strings.Contains(string(b), id) {
			return d.Name(), nil
		}
	}
	return "", fmt.Errorf("no process of container %s in /proc/*/cgroup", id)
}

// procField returns the value of a "Key:\tvalue" line of /proc/PID/status.
func procField(status, key string) string {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// mountOptions returns the per-mount options (field 6 of mountinfo) of the mount at point.
func mountOptions(mountinfo, point string) (string, bool) {
	for _, l := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(l)
		if len(f) > 5 && f[4] == point {
			return f[5], true
		}
	}
	return "", false
}

func TestMountOptionsAndProcFieldReadTheKernelFormats(t *testing.T) {
	mi := "36 35 0:31 / /host/sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - tmpfs tmpfs ro,mode=755\n" +
		"37 36 0:32 / /host/sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
	if o, ok := mountOptions(mi, "/host/sys/fs/cgroup"); !ok || o != "ro,nosuid,nodev,noexec,relatime" {
		t.Errorf("mountOptions = %q, %v", o, ok)
	}
	if _, ok := mountOptions(mi, "/host"); ok {
		t.Error("mountOptions found a mount point that is not there")
	}
	if got := procField("Name:\tpressure-agent\nUid:\t65532\t65532\t65532\t65532\nCapEff:\t0000000000000000\n", "Uid:"); got != "65532\t65532\t65532\t65532" {
		t.Errorf("procField Uid = %q", got)
	}
}
