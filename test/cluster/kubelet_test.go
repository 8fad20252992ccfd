package cluster

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestKubeletReadyWantsAHeartbeatOfTheNewKubelet(t *testing.T) {
	began := time.Date(2026, 12, 5, 4, 0, 10, 500e6, time.UTC)
	ready := func(status corev1.ConditionStatus, beat time.Time) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: status, LastHeartbeatTime: metav1.NewTime(beat)}}}}
	}
	for _, tc := range []struct {
		name  string
		node  *corev1.Node
		ready bool
	}{
		{"a Ready heartbeat after the start is ready", ready(corev1.ConditionTrue, began.Add(3*time.Second)), true},
		{"a Ready heartbeat in the start's second is ready", ready(corev1.ConditionTrue, began.Truncate(time.Second)), true},
		{"a Ready heartbeat of the previous kubelet is not ready", ready(corev1.ConditionTrue, began.Add(-2*time.Second)), false},
		{"a fresh NotReady is not ready", ready(corev1.ConditionFalse, began.Add(3*time.Second)), false},
		{"no Ready condition is not ready", &corev1.Node{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := kubeletReady(tc.node, began); (err == nil) != tc.ready {
				t.Errorf("kubeletReady = %v, want ready %t", err, tc.ready)
			}
		})
	}
}

func TestKubeletHealthzURLComesFromTheMergedConfig(t *testing.T) {
	base := DefaultKubeletConfig("/n", net.IPv4(10, 213, 77, 1), "/n/ca.crt")
	for _, tc := range []struct {
		name     string
		override *kubeletv1beta1.KubeletConfiguration
		want     string
	}{
		{"the harness default", nil, "http://127.0.0.1:10248/healthz"},
		{"an overridden port", &kubeletv1beta1.KubeletConfiguration{HealthzPort: ptr.To[int32](10300)}, "http://127.0.0.1:10300/healthz"},
		{"port 0 turns healthz off", &kubeletv1beta1.KubeletConfiguration{HealthzPort: ptr.To[int32](0)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := MergeKubeletConfig(base, tc.override)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "kubelet-config.yaml")
			if err := os.WriteFile(path, cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := kubeletHealthzURL(path)
			if err != nil || got != tc.want {
				t.Errorf("kubeletHealthzURL = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
