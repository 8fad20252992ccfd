package janitor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFromPodEvictionTimePrecedence(t *testing.T) {
	cond, term, seen := t0, t0.Add(time.Minute), t0.Add(2*time.Minute)
	withTerm := func(p *v1.Pod) { p.Status.InitContainerStatuses = []v1.ContainerStatus{terminatedAt("init", term)} }
	withSeen := annotated(AnnotationTerminalSince, seen.Format(time.RFC3339))
	tests := []struct {
		name       string
		pod        *v1.Pod
		wantAt     time.Time
		wantSource TimeSource
	}{
		{"the DisruptionTarget condition wins over terminations and first-seen", evictedPod("a", "p", cond, withTerm, withSeen), cond, FromDisruptionTarget},
		{"a False DisruptionTarget condition is ignored", evictedPod("a", "p", cond, withTerm, func(p *v1.Pod) {
			p.Status.Conditions[0].Status = v1.ConditionFalse
		}), term, FromContainerTermination},
		{"container termination (init containers too) wins over first-seen", evictedPod("a", "p", cond, noCondition(), withTerm, withSeen), term, FromContainerTermination},
		{"first-seen annotation is the last resort", evictedPod("a", "p", cond, noCondition(), withSeen), seen, FromFirstSeen},
		{"an unparsable first-seen annotation counts as absent", evictedPod("a", "p", cond, noCondition(), annotated(AnnotationTerminalSince, "yesterday")), time.Time{}, FromNone},
		{"the start time is never used", evictedPod("a", "p", cond, noCondition()), time.Time{}, FromNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FromPod(tc.pod)
			if !got.EvictedAt.Equal(tc.wantAt) || got.Source != tc.wantSource {
				t.Errorf("FromPod() eviction time %v from %q; want %v from %q", got.EvictedAt, got.Source, tc.wantAt, tc.wantSource)
			}
		})
	}
}

func TestFromPodSumsContainerResourcesAndFindsTheController(t *testing.T) {
	pod := evictedPod("a", "p", t0, ownedBy("ReplicaSet", "r"), annotated(AnnotationPreserve, "true"), func(p *v1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "side", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")},
		}})
		p.OwnerReferences = append([]metav1.OwnerReference{{Kind: "ConfigMap", Name: "not-controller"}}, p.OwnerReferences...)
		p.DeletionTimestamp = &metav1.Time{Time: t0}
		p.Finalizers = []string{"example.com/hold"}
	})
	got := FromPod(pod)
	if q := got.Requests[v1.ResourceMemory]; q.String() != "256Mi" {
		t.Errorf("memory request sum %s; want 256Mi", q.String())
	}
	wantOwner := OwnerRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "r", UID: "uid-ReplicaSet-r"}
	if diff := cmp.Diff(got.Owner, wantOwner); diff != "" {
		t.Errorf("owner (-got +want):\n%s", diff)
	}
	if !got.Preserve || !got.Terminating || !got.Finalizers || got.Node != "node-1" || got.QOS != v1.PodQOSBurstable {
		t.Errorf("preserve %v terminating %v finalizers %v node %q qos %q; want true true true node-1 Burstable",
			got.Preserve, got.Terminating, got.Finalizers, got.Node, got.QOS)
	}
	if FromPod(evictedPod("a", "q", t0)).Finalizers {
		t.Errorf("a pod without finalizers: Finalizers true")
	}
}
