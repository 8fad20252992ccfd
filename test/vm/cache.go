package vm

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/test/images"
)

// Issue 33 on the guest: a pod whose page cache holds the working set close to the kubelet's threshold,
// then an anonymous hog beside it. The reader's file is on the node's scratch disk (NodeOptions.DiskMiB,
// a hostPath volume): the kubelet's root is tmpfs, whose pages are shmem, not reclaimable page cache.

// ReaderContainer is the page-cache pod's container: tail its log (NodeOptions.TailPodLogs
// "NAMESPACE/"+ReaderContainer) for CacheCase to see its read passes.
const ReaderContainer = "reader"

// CacheResult is one CacheCase run.
type CacheResult struct {
	FileMiB int64
	// Held is how long the reader held its cache with nobody evicted (the hold, or until an eviction).
	Held time.Duration
	// HoldEvicted and HoldOOMKills are the evictions ("agent:NAME", "kubelet:NAME") and the pods cgroup's
	// kernel OOM kills while the reader held its cache, before the hog.
	HoldEvicted  []string
	HoldOOMKills int
	// Evicted and OOMKills are those of the whole case, the hog's part included.
	Evicted  []string
	OOMKills int
	// ReaderAlive: the reader was Running, not deleted or evicted, at the end.
	ReaderAlive bool
	// PeakMiB is the pods cgroup's highest memory.current.
	PeakMiB float64
}

func (r CacheResult) String() string {
	return fmt.Sprintf("file %dMi, held %s: evicted %v, OOM kills %d; with the hog: evicted %v, OOM kills %d; reader alive %t, pods cgroup peak %.0f MiB",
		r.FileMiB, r.Held.Round(time.Second), r.HoldEvicted, r.HoldOOMKills, r.Evicted, r.OOMKills, r.ReaderAlive, r.PeakMiB)
}

// CacheCase creates namespace ns and in it a reader that reads a sparse file of fileBytes on the
// node's scratch disk twice and holds its cache (with loop: reads it in a loop), waits for its second pass, holds for hold (both end at
// the first eviction: HoldEvicted), then starts a BestEffort hog ramping anonymous memory as fast as the guest goes and waits
// (at most timeout) until the hog is evicted or ends.
func (n *Node) CacheCase(ctx context.Context, ns string, fileBytes int64, loop bool, hold, timeout time.Duration) (CacheResult, error) {
	res := CacheResult{FileMiB: fileBytes >> 20}
	c := n.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("cache case namespace: %w", err)
	}
	before := n.lastOOMKills()
	if _, err := c.CoreV1().Pods(ns).Create(ctx, n.readerPod(ns, fileBytes, loop), metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("reader pod: %w", err)
	}
	evicted, err := n.waitPasses(ctx, ns, 2, 5*time.Minute)
	if err != nil {
		return res, err
	}
	start := time.Now()
	for !evicted && time.Since(start) < hold {
		if ev, err := n.evictions(ctx, ns); err != nil || len(ev) > 0 {
			break
		}
		time.Sleep(2 * time.Second)
	}
	res.Held = time.Since(start)
	if res.HoldEvicted, err = n.evictions(ctx, ns); err != nil {
		return res, err
	}
	res.HoldOOMKills = n.lastOOMKills() - before
	hog := casePod(n.Name, ns, "hog", "stress", []string{"mem", "--rate", "0", "--target", "3Gi"})
	if _, err := c.CoreV1().Pods(ns).Create(ctx, hog, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("hog pod: %w", err)
	}
	waitErr := n.waitEnded(ctx, ns, "hog", timeout)
	time.Sleep(3 * time.Second) // the sampler's next lines, the kubelet's status and events
	if res.Evicted, err = n.evictions(ctx, ns); err != nil {
		return res, err
	}
	res.OOMKills = n.lastOOMKills() - before
	if p, err := c.CoreV1().Pods(ns).Get(ctx, "reader", metav1.GetOptions{}); err == nil {
		res.ReaderAlive = p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
	}
	res.PeakMiB, _ = rampOf(n.Samples())
	return res, waitErr
}

// readerPod is the page-cache pod: Burstable (64Mi requested), its file on the scratch disk, read twice
// and held, or with loop read again and again (stress cache --passes 0: its cache stays active, and what
// the agent reclaims is read back at the next pass).
func (n *Node) readerPod(ns string, fileBytes int64, loop bool) *corev1.Pod {
	args := []string{"cache", "--path", "/data/f", "--size", fmt.Sprint(fileBytes), "--sparse"}
	if loop {
		args = append(args, "--passes", "0")
	}
	return onDisk(withRequest(casePod(n.Name, ns, "reader", ReaderContainer, args), "64Mi"), ns)
}

// withRequest gives p's container a memory request (Burstable).
func withRequest(p *corev1.Pod, memory string) *corev1.Pod {
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)}
	return p
}

// onDisk mounts the directory ns of the node's scratch disk at /data in p.
func onDisk(p *corev1.Pod, ns string) *corev1.Pod {
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: GuestDisk + "/" + ns, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return p
}

// casePod is a stress pod bound to node (host network, as the race's pods).
func casePod(node, ns, name, container string, args []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node, HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](2),
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: container, Image: images.StressName, ImagePullPolicy: corev1.PullNever,
				Args: args}},
		},
	}
}

// waitPasses waits for the reader's pass count n in its log on the output, or for the first eviction in
// ns (true), and fails after timeout.
func (n *Node) waitPasses(ctx context.Context, ns string, count int, timeout time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	want := fmt.Sprintf(`"count":%d`, count)
	for {
		for _, l := range n.Guest.OutputLines("") {
			if strings.Contains(l, `"event":"pass"`) && strings.Contains(l, want) {
				return false, nil
			}
		}
		if ev, err := n.evictions(ctx, ns); err == nil && len(ev) > 0 {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("no reader pass %d on the guest's output (is %s/%s in NodeOptions.TailPodLogs?): %w", count, ns,
				ReaderContainer, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// waitEnded waits until pod ns/name has ended, is being deleted or is gone.
func (n *Node) waitEnded(ctx context.Context, ns, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		p, err := n.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded || p.DeletionTimestamp != nil) {
			return nil
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s/%s still running after %s", ns, name, timeout)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// evictions are the pods of ns evicted so far, "agent:NAME" (a PressureEviction Event) or "kubelet:NAME",
// sorted.
func (n *Node) evictions(ctx context.Context, ns string) ([]string, error) {
	evicted, _, err := n.evictionEvents(ctx, ns)
	return evicted, err
}

// evictionEvents are evictions' list and whether an Event of ns says the kernel OOM-killed a container.
func (n *Node) evictionEvents(ctx context.Context, ns string) (evicted []string, oomKilled bool, err error) {
	evs, err := n.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("events of %s: %w", ns, err)
	}
	seen := map[string]bool{}
	for _, e := range evs.Items {
		switch {
		case e.Reason == actuate.ReasonPressureEviction:
			seen["agent:"+e.InvolvedObject.Name] = true
		case e.Reason == "Evicted" && e.Source.Component == "kubelet":
			seen["kubelet:"+e.InvolvedObject.Name] = true
		case e.Reason == "OOMKilling" || strings.Contains(e.Message, "OOMKilled"):
			oomKilled = true
		}
	}
	evicted = make([]string, 0, len(seen))
	for k := range seen {
		evicted = append(evicted, k)
	}
	sort.Strings(evicted)
	return evicted, oomKilled, nil
}
