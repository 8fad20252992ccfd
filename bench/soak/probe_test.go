package soak

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestTaintsSeenListsEachBlockingTaintWithWhenItWasSeen(t *testing.T) {
	s := taintsSeen{}
	evicting := corev1.Taint{Key: "pressure.kube-pressure.io/evicting", Effect: corev1.TaintEffectNoSchedule}
	memory := corev1.Taint{Key: "node.kubernetes.io/memory-pressure", Effect: corev1.TaintEffectNoSchedule}
	soft := corev1.Taint{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}
	s.add([]corev1.Taint{evicting, memory, soft}, time.Second)
	s.add([]corev1.Taint{evicting}, 30*time.Second)
	want := "[node.kubernetes.io/memory-pressure:NoSchedule (seen 1s to 1s) pressure.kube-pressure.io/evicting:NoSchedule (seen 1s to 30s)]"
	if got := fmt.Sprint(s.list()); got != want {
		t.Errorf("list = %s\nwant   %s", got, want)
	}
}
