package podsoom

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/cli"
	"github.com/kube-pressure/pressure/internal/why"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/images"
)

const podsLimit = 1 << 30

// TestWhyNamesThePodsCgroupOOM: kubelet eviction off ("0%" disables a threshold), pods cgroup limited
// to 1Gi, a BestEffort hog allocating without limit: the kernel OOM-kills it inside kubepods, the
// runtime reports OOMKilled, and why says "killed by the kernel for the pods cgroup" (no container
// limit, no SystemOOM on the node).
func TestWhyNamesThePodsCgroupOOM(t *testing.T) {
	if reason := clustertest.NodeProblem(); reason != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", reason)
	}
	memTotal := memTotalBytes(t)
	cp := clustertest.ControlPlane(t)
	node := clustertest.Node(t, cp, cluster.NodeOptions{KubeletConfig: &kubeletv1beta1.KubeletConfiguration{
		KubeReserved:           map[string]string{"memory": resource.NewQuantity(memTotal-podsLimit, resource.BinarySI).String()},
		EnforceNodeAllocatable: []string{"pods"},
		EvictionHard:           map[string]string{"memory.available": "0%"},
	}})
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	poll(ctx, t, "serviceaccount default", func() bool {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: "default"}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever,
			Args: []string{"mem", "--rate", "256Mi", "--target", "2Gi"}}},
	}}
	created, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last string
	poll(ctx, t, "hog terminated", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "hog", metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = fmt.Sprintf("%s %s %+v", p.Status.Phase, p.Status.Reason, p.Status.ContainerStatuses)
		st := p.Status.ContainerStatuses
		return len(st) == 1 && st[0].State.Terminated != nil
	})
	t.Logf("hog on node %s: %s", node.Name(), last)
	if line := podsCgroupOOM(t, created.UID); line == "" {
		t.Errorf("kernel log: no OOM kill constrained by the pods cgroup (oom_memcg=/kubepods,) of a task in pod %s", created.UID)
	} else {
		t.Logf("kernel log: %s", line)
	}
	out, err := run(ctx, cp, "why", "hog", "-n", "default", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v why.Verdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("why: not JSON: %v\n%s", err, out)
	}
	text, _ := run(ctx, cp, "why", "hog", "-n", "default")
	t.Logf("kubectl pressure why hog -n default\n%s", text)
	if v.Cause != why.CauseOOMKernel || !strings.Contains(v.Summary, "pods cgroup limit 1Gi") {
		t.Errorf("verdict %s: %q; want %s naming the pods cgroup limit 1Gi", v.Cause, v.Summary, why.CauseOOMKernel)
	}
}

func run(ctx context.Context, cp *cluster.ControlPlane, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := cli.Run(ctx, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		append([]string{"--kubeconfig", cp.Kubeconfig()}, args...))
	return out.String(), err
}

func poll(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// podsCgroupOOM returns the kernel log line of an OOM kill whose constraining cgroup was the pods
// cgroup itself and whose task was in the pod with this UID, or "" if there is none. It matches the
// pod's UID rather than counting kills: the kernel ring buffer is bounded, so on a busy machine old
// lines roll off while new ones arrive and a count before/after can stay the same.
func podsCgroupOOM(t *testing.T, uid types.UID) string {
	t.Helper()
	out, err := exec.Command("dmesg").Output()
	if err != nil {
		t.Fatalf("dmesg: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "oom_memcg=/kubepods,") && strings.Contains(line, "/pod"+string(uid)+"/") {
			return line
		}
	}
	return ""
}

func memTotalBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fs[1], 10, 64)
			if err != nil {
				t.Fatalf("/proc/meminfo: MemTotal %q: %v", fs[1], err)
			}
			return kb << 10
		}
	}
	t.Fatal("/proc/meminfo: no MemTotal line")
	return 0
}
