package janitor

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// t0 is the reference time of the unit tests.
var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*v1.Pod)

// evictedPod is a pod as the kubelet leaves it after a node-pressure eviction at evictedAt.
func evictedPod(ns, name string, evictedAt time.Time, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), ResourceVersion: "7",
			CreationTimestamp: metav1.NewTime(evictedAt.Add(-time.Hour)),
		},
		Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{
			Name: "app",
			Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi"), v1.ResourceCPU: resource.MustParse("100m")},
				Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("256Mi")},
			},
		}}},
		Status: v1.PodStatus{
			Phase: v1.PodFailed, Reason: ReasonEvicted, QOSClass: v1.PodQOSBurstable,
			Message:   "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ",
			StartTime: ptr.To(metav1.NewTime(evictedAt.Add(-50 * time.Minute))),
			Conditions: []v1.PodCondition{{
				Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet",
				LastTransitionTime: metav1.NewTime(evictedAt),
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func ownedBy(kind, name string) podOpt {
	return func(p *v1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID("uid-" + kind + "-" + name), Controller: ptr.To(true),
		}}
	}
}

func phase(ph v1.PodPhase, reason string) podOpt {
	return func(p *v1.Pod) { p.Status.Phase, p.Status.Reason = ph, reason }
}

func noCondition() podOpt { return func(p *v1.Pod) { p.Status.Conditions = nil } }

func withLabels(kv ...string) podOpt {
	return func(p *v1.Pod) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func annotated(k, v string) podOpt {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func infos(pods ...*v1.Pod) []PodInfo {
	out := make([]PodInfo, len(pods))
	for i, p := range pods {
		out[i] = FromPod(p)
	}
	return out
}

// verdict is the comparable summary of an Action.
type verdict struct {
	Pod  string
	Verb Verb
	Skip SkipReason
	At   time.Time
}

func verdicts(actions []Action) []verdict {
	out := make([]verdict, len(actions))
	for i, a := range actions {
		out[i] = verdict{Pod: a.Pod.Key(), Verb: a.Verb, Skip: a.Skip, At: a.At}
	}
	return out
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t) }
