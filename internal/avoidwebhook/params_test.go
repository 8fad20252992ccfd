package avoidwebhook

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
)

func TestParamsOfSortsByNameAndKeepsWhetherANodeIsNamed(t *testing.T) {
	cm := func(name string, annotations map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "pressure", Name: name, Annotations: annotations},
			Data: map[string]string{rsUID: "2026-12-01T10:05:00Z"}}
	}
	got := ParamsOf([]*corev1.ConfigMap{
		cm("pressure-agent-avoid-node-b", map[string]string{loopbreaker.AvoidanceNodeAnnotation: "node-b"}),
		cm("pressure-agent-avoid-node-a", map[string]string{loopbreaker.AvoidanceNodeAnnotation: "node-a"}),
		cm("pressure-agent-avoid-anonymous", nil),
	})
	until := map[string]string{rsUID: "2026-12-01T10:05:00Z"}
	want := []Param{
		{Name: "pressure-agent-avoid-anonymous", Until: until},
		{Name: "pressure-agent-avoid-node-a", Node: "node-a", HasNode: true, Until: until},
		{Name: "pressure-agent-avoid-node-b", Node: "node-b", HasNode: true, Until: until},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParamsOf\n got %+v\nwant %+v", got, want)
	}
}
