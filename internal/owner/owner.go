package owner

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/policy"
)

// ControllerOf returns the pod's controller owner reference as a workload (zero for a bare pod).
func ControllerOf(pod *v1.Pod) policy.Workload {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return policy.Workload{}
	}
	return policy.Workload{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: pod.Namespace, Name: ref.Name, UID: string(ref.UID)}
}

// isReplicaSet reports an apps ReplicaSet (the only kind Workload lifts).
func isReplicaSet(r policy.Workload) bool {
	return r.Kind == "ReplicaSet" && (r.APIVersion == "apps/v1" || r.APIVersion == "")
}

// Workload lifts a ReplicaSet to its Deployment, given the ReplicaSet (nil when it is gone). A
// ReplicaSet with another UID than the reference is a new one under the same name: the pod's own
// ReplicaSet is gone, and the reference is kept. Other kinds (StatefulSet, DaemonSet, Job, ...) are
// their own workload.
func Workload(r policy.Workload, rs *appsv1.ReplicaSet) policy.Workload {
	if !isReplicaSet(r) || rs == nil || (r.UID != "" && string(rs.UID) != r.UID) {
		return r
	}
	c := metav1.GetControllerOf(rs)
	if c == nil || c.Kind != "Deployment" {
		return r
	}
	return policy.Workload{APIVersion: c.APIVersion, Kind: c.Kind, Namespace: r.Namespace, Name: c.Name, UID: string(c.UID)}
}

// Resolver resolves workloads through the API. Results are cached by ReplicaSet UID (a ReplicaSet
// never changes its controller). It is safe for concurrent use.
type Resolver struct {
	Client kubernetes.Interface

	mu    sync.Mutex
	cache map[string]policy.Workload
}

// Resolve returns the workload of a controller reference. On error it returns ref itself with the
// error, so callers still name the nearest owner.
func (r *Resolver) Resolve(ctx context.Context, ref policy.Workload) (policy.Workload, error) {
	if !isReplicaSet(ref) {
		return ref, nil
	}
	r.mu.Lock()
	got, ok := r.cache[ref.UID]
	r.mu.Unlock()
	if ok && ref.UID != "" {
		return got, nil
	}
	rs, err := r.Client.AppsV1().ReplicaSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ref, nil
	case err != nil:
		return ref, fmt.Errorf("get replicaset %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	got = Workload(ref, rs)
	if ref.UID != "" && string(rs.UID) == ref.UID {
		r.mu.Lock()
		if r.cache == nil {
			r.cache = map[string]policy.Workload{}
		}
		r.cache[ref.UID] = got
		r.mu.Unlock()
	}
	return got, nil
}
