package kubeconv

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

const mi = int64(1) << 20

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(name string, req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func sidecar(name string, req corev1.ResourceList) corev1.Container {
	c := ctr(name, req, nil)
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func pod(name string, containers []corev1.Container, mut ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: containers}}
	for _, m := range mut {
		m(p)
	}
	return p
}

func TestCandidateRequestsAndQOS(t *testing.T) {
	tests := []struct {
		name        string
		pod         *corev1.Pod
		wantQOS     string
		wantMem     int64
		wantStorage int64
	}{
		{"R1 pod A: request 100Mi limit 2500Mi is burstable",
			pod("a", []corev1.Container{ctr("a", rl("memory", "100Mi"), rl("memory", "2500Mi"))}), rank.QOSBurstable, 100 * mi, 0},
		{"R1 pod B without resources is best-effort with request 0",
			pod("b", []corev1.Container{ctr("b", nil, nil)}), rank.QOSBestEffort, 0, 0},
		{"R1 pod C with cpu and memory requests equal to limits is guaranteed",
			pod("c", []corev1.Container{ctr("c", rl("memory", "1Gi", "cpu", "1"), rl("memory", "1Gi", "cpu", "1"))}),
			rank.QOSGuaranteed, 1024 * mi, 0},
		{"limits only default nothing here: memory-only limits are burstable",
			pod("d", []corev1.Container{ctr("d", nil, rl("memory", "1Gi"))}), rank.QOSBurstable, 0, 0},
		{"regular containers and sidecars are summed",
			pod("e", []corev1.Container{ctr("e1", rl("memory", "100Mi"), nil), ctr("e2", rl("memory", "20Mi"), nil)},
				func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{sidecar("s", rl("memory", "50Mi"))} }),
			rank.QOSBurstable, 170 * mi, 0},
		{"an init container after a sidecar needs itself plus the sidecar",
			pod("f", []corev1.Container{ctr("f", rl("memory", "100Mi"), nil)}, func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{sidecar("s", rl("memory", "50Mi")), ctr("init", rl("memory", "300Mi"), nil)}
			}),
			rank.QOSBurstable, 350 * mi, 0},
		{"an init container before a sidecar needs only itself",
			pod("g", []corev1.Container{ctr("g", rl("memory", "100Mi"), nil)}, func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{ctr("init", rl("memory", "300Mi"), nil), sidecar("s", rl("memory", "50Mi"))}
			}),
			rank.QOSBurstable, 300 * mi, 0},
		{"overhead is added to a non-zero request",
			pod("h", []corev1.Container{ctr("h", rl("memory", "100Mi", "ephemeral-storage", "1Gi"), nil)},
				func(p *corev1.Pod) { p.Spec.Overhead = rl("memory", "10Mi", "ephemeral-storage", "1Mi") }),
			rank.QOSBurstable, 110 * mi, 1025 * mi},
		{"overhead is not added to a zero request",
			pod("i", []corev1.Container{ctr("i", nil, nil)}, func(p *corev1.Pod) { p.Spec.Overhead = rl("memory", "10Mi") }),
			rank.QOSBestEffort, 0, 0},
		{"pod-level resources replace container requests and zero the ephemeral-storage request",
			pod("j", []corev1.Container{ctr("j", rl("memory", "100Mi", "ephemeral-storage", "1Gi"), nil)}, func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("memory", "1Gi", "cpu", "1"), Limits: rl("memory", "1Gi", "cpu", "1")}
			}),
			rank.QOSGuaranteed, 1024 * mi, 0},
		{"an empty but non-nil spec.resources makes the pod best-effort for QoS",
			pod("k", []corev1.Container{ctr("k", rl("memory", "100Mi"), nil)}, func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{}
			}),
			rank.QOSBestEffort, 100 * mi, 0},
		{"status.qosClass wins over computation",
			pod("l", []corev1.Container{ctr("l", nil, nil)}, func(p *corev1.Pod) { p.Status.QOSClass = corev1.PodQOSBurstable }),
			rank.QOSBurstable, 0, 0},
		{"zero requests do not count for QoS",
			pod("m", []corev1.Container{ctr("m", rl("memory", "0"), nil)}), rank.QOSBestEffort, 0, 0},
		{"a request beyond int64 counts as the largest int64, not 0 (the kubelet compares it exactly)",
			pod("n", []corev1.Container{ctr("n", rl("memory", "1e30", "ephemeral-storage", "1e30"), nil)}), rank.QOSBurstable,
			math.MaxInt64, math.MaxInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Candidate(tc.pod, nil)
			if c.QOSClass != tc.wantQOS || c.MemoryRequest != tc.wantMem || c.EphemeralStorageRequest != tc.wantStorage {
				t.Errorf("QoS %s, memory request %d, storage request %d; want %s, %d, %d",
					c.QOSClass, c.MemoryRequest, c.EphemeralStorageRequest, tc.wantQOS, tc.wantMem, tc.wantStorage)
			}
		})
	}
}

func TestCandidateCritical(t *testing.T) {
	prio := func(v int32) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.Priority = &v } }
	ann := func(k, v string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations = map[string]string{k: v} }
	}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		want       bool
		wantReason string
		wantPrio   int32
	}{
		{"static pod from a file, as the API server shows it (its mirror pod), is critical",
			pod("s", nil, func(p *corev1.Pod) {
				p.Annotations = map[string]string{"kubernetes.io/config.source": "file", "kubernetes.io/config.mirror": "abc"}
			}), true, `static pod (kubernetes.io/config.source="file")`, 0},
		// The API server does not validate config.source and the kubelet overwrites it with "api" in its
		// own copy: a tenant's pod that sets it is evicted like any other (issue 30, item 1).
		{"API pod with a spoofed config.source file is not critical", pod("spoof", nil, ann("kubernetes.io/config.source", "file")), false, "", 0},
		{"API pod with a spoofed config.source http is not critical", pod("spoof2", nil, ann("kubernetes.io/config.source", "http")), false, "", 0},
		{"config.source api is not static", pod("a", nil, ann("kubernetes.io/config.source", "api")), false, "", 0},
		{"mirror pod is critical", pod("m", nil, ann("kubernetes.io/config.mirror", "abc")), true, "mirror pod", 0},
		{"priority 2000000000 is critical", pod("p", nil, prio(2000000000)), true, "priority 2000000000 >= 2000000000", 2000000000},
		{"priority 1999999999 is not critical", pod("q", nil, prio(1999999999)), false, "", 1999999999},
		{"nil priority is 0 and not critical", pod("n", nil), false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Candidate(tc.pod, nil)
			if c.Critical != tc.want || c.CriticalReason != tc.wantReason || c.Priority != tc.wantPrio {
				t.Errorf("critical %v %q priority %d; want %v %q %d", c.Critical, c.CriticalReason, c.Priority,
					tc.want, tc.wantReason, tc.wantPrio)
			}
		})
	}
}

func TestCandidateFields(t *testing.T) {
	grace := int64(45)
	yes := true
	p := pod("web", []corev1.Container{
		ctr("app", rl("memory", "1.5Gi"), rl("ephemeral-storage", "500Mi")),
		ctr("side", nil, rl("ephemeral-storage", "2Gi")),
	}, func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{ctr("setup", rl("ephemeral-storage", "100Mi"), nil)}
		p.Spec.TerminationGracePeriodSeconds = &grace
		p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/memory-pressure", Operator: corev1.TolerationOpExists}}
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", Controller: &yes}}
		sl := resource.MustParse("1Gi")
		p.Spec.Volumes = []corev1.Volume{
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &sl}}},
			{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
			{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}},
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
			{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}},
		}
	})
	stats := map[string]signal.PodStats{"uid-web": {UID: "uid-web", MemoryWorkingSet: signal.Uint64(1)}}
	got := Candidate(p, stats)
	oneGi := rank.Amount{Value: 1 << 30, Format: resource.BinarySI}
	limit := rank.Amount{Value: 2548 * mi, Format: resource.BinarySI}
	want := rank.Candidate{
		UID: "uid-web", Namespace: "ns", Name: "web", QOSClass: rank.QOSBurstable,
		MemoryRequest: 1536 * mi, EphemeralStorageRequest: 100 * mi, EphemeralStorageLimit: &limit,
		TerminationGracePeriodSeconds: &grace,
		Containers: []rank.Container{
			{Name: "app", Kind: rank.ContainerRegular, MemoryRequest: rank.Amount{Value: 1536 * mi, Format: resource.BinarySI},
				EphemeralStorageLimit: &rank.Amount{Value: 500 * mi, Format: resource.BinarySI}},
			{Name: "side", Kind: rank.ContainerRegular, EphemeralStorageLimit: &rank.Amount{Value: 2 << 30, Format: resource.BinarySI}},
			{Name: "setup", Kind: rank.ContainerInit, EphemeralStorageRequest: rank.Amount{Value: 100 * mi, Format: resource.BinarySI}},
		},
		Volumes: []rank.Volume{
			{Name: "scratch", Kind: rank.VolumeEmptyDir, SizeLimit: &oneGi},
			{Name: "shm", Kind: rank.VolumeEmptyDir, Medium: "Memory"},
			{Name: "host", Kind: rank.VolumeHostPath},
			{Name: "cm", Kind: rank.VolumeConfigMap},
			{Name: "token", Kind: rank.VolumeOther},
		},
		ToleratesMemoryPressure: true, OwnerKind: "ReplicaSet", OwnerName: "web-1",
		Stats: &signal.PodStats{UID: "uid-web", MemoryWorkingSet: signal.Uint64(1)},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("candidate (-got +want):\n%s", diff)
	}
	var local []string
	for _, v := range got.Volumes {
		if v.Local() {
			local = append(local, v.Name)
		}
	}
	if diff := cmp.Diff(local, []string{"scratch", "host", "cm"}); diff != "" {
		t.Errorf("local volumes (-got +want):\n%s", diff)
	}
}

func TestCandidateEphemeralStorageLimitAndTolerations(t *testing.T) {
	tests := []struct {
		name      string
		pod       *corev1.Pod
		wantLimit *int64
		wantTol   bool
	}{
		{"no container limits ephemeral storage: no pod limit", pod("a", []corev1.Container{ctr("a", nil, nil)}), nil, false},
		{"an explicit zero limit is a present zero limit",
			pod("b", []corev1.Container{ctr("b", nil, rl("ephemeral-storage", "0"))}), ptr(int64(0)), false},
		{"init container limit larger than the sum wins",
			pod("c", []corev1.Container{ctr("c", nil, rl("ephemeral-storage", "1Gi"))}, func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{ctr("i", nil, rl("ephemeral-storage", "3Gi"))}
			}), ptr(int64(3 << 30)), false},
		{"toleration of another taint does not count",
			pod("d", nil, func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/disk-pressure", Operator: corev1.TolerationOpExists}}
			}), nil, false},
		{"empty key with Exists tolerates everything",
			pod("e", nil, func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} }), nil, true},
		{"NoExecute toleration does not tolerate a NoSchedule taint",
			pod("f", nil, func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/memory-pressure", Operator: corev1.TolerationOpExists,
					Effect: corev1.TaintEffectNoExecute}}
			}), nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Candidate(tc.pod, nil)
			var got *int64
			if c.EphemeralStorageLimit != nil {
				got = &c.EphemeralStorageLimit.Value
			}
			if diff := cmp.Diff(got, tc.wantLimit); diff != "" {
				t.Errorf("ephemeral-storage limit (-got +want):\n%s", diff)
			}
			if c.ToleratesMemoryPressure != tc.wantTol {
				t.Errorf("ToleratesMemoryPressure = %v, want %v", c.ToleratesMemoryPressure, tc.wantTol)
			}
		})
	}
}

func TestCandidatePodLevelMemoryRequest(t *testing.T) {
	p := pod("j", []corev1.Container{ctr("j", rl("memory", "100Mi"), nil)}, func(p *corev1.Pod) {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("memory", "1Gi")}
	})
	c := Candidate(p, nil)
	want := &rank.Amount{Value: 1 << 30, Format: resource.BinarySI}
	if !c.PodLevelResources || cmp.Diff(c.PodLevelMemoryRequest, want) != "" {
		t.Errorf("PodLevelResources %v, PodLevelMemoryRequest %v; want true, %v", c.PodLevelResources, c.PodLevelMemoryRequest, want)
	}
	if c := Candidate(pod("n", []corev1.Container{ctr("n", rl("memory", "1Gi"), nil)}), nil); c.PodLevelResources || c.PodLevelMemoryRequest != nil {
		t.Errorf("container-only pod reports pod-level resources: %v %v", c.PodLevelResources, c.PodLevelMemoryRequest)
	}
}

func TestNormalizeImage(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                                "docker.io/library/nginx:latest",
		"nginx:1.25":                           "docker.io/library/nginx:1.25",
		"user/app:1":                           "docker.io/user/app:1",
		"pressure.local/stress:v1":             "pressure.local/stress:v1",
		"localhost/app":                        "localhost/app:latest",
		"registry:5000/app@sha256:abc":         "registry:5000/app@sha256:abc",
		"docker.io/library/nginx@sha256:abc":   "docker.io/library/nginx@sha256:abc",
		"sha256:0123":                          "sha256:0123",
		"docker-pullable://nginx@sha256:abc12": "docker.io/library/nginx@sha256:abc12",
	} {
		if got := NormalizeImage(in); got != want {
			t.Errorf("NormalizeImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnusedImageBytesCountsImagesNoActivePodUses(t *testing.T) {
	images := []corev1.ContainerImage{
		{Names: []string{"docker.io/library/nginx@sha256:aaa", "docker.io/library/nginx:1.25"}, SizeBytes: 100},
		{Names: []string{"pressure.local/stress:v1"}, SizeBytes: 20},
		{Names: []string{"docker.io/library/redis:7"}, SizeBytes: 300},
		{Names: []string{"docker.io/library/busybox:latest"}, SizeBytes: 4000},
	}
	running := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "nginx:1.25"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	pending := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Image: "pressure.local/stress:v1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	done := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "redis:7"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	byID := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "my-busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{ImageID: "docker.io/library/busybox:latest"}}}}
	// redis: only a terminated pod uses it (container GC removes that container first): 300 bytes.
	if got := UnusedImageBytes(images, []*corev1.Pod{running, pending, done, byID}); got != 300 {
		t.Errorf("unused %d bytes, want 300 (redis)", got)
	}
	if got := UnusedImageBytes(images, nil); got != 4420 {
		t.Errorf("no pods: unused %d bytes, want all 4420", got)
	}
}
