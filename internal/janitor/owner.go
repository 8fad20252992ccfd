package janitor

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ownerResolver maps a pod's controller to the workload users look at: a ReplicaSet owned by a
// Deployment resolves to the Deployment. Results are cached by ReplicaSet UID (an RS never changes
// its controller).
type ownerResolver struct {
	client kubernetes.Interface
	mu     sync.Mutex
	cache  map[string]OwnerRef
}

func newOwnerResolver(c kubernetes.Interface) *ownerResolver {
	return &ownerResolver{client: c, cache: map[string]OwnerRef{}}
}

// resolve returns the workload for ref. On error it returns ref itself with the error, so the
// evidence still names the nearest owner.
func (r *ownerResolver) resolve(ctx context.Context, namespace string, ref OwnerRef) (OwnerRef, error) {
	if ref.Kind != "ReplicaSet" || ref.APIVersion != "apps/v1" {
		return ref, nil
	}
	r.mu.Lock()
	got, ok := r.cache[ref.UID]
	r.mu.Unlock()
	if ok {
		return got, nil
	}
	rs, err := r.client.AppsV1().ReplicaSets(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ref, nil
	case err != nil:
		return ref, fmt.Errorf("get replicaset %s/%s: %w", namespace, ref.Name, err)
	case string(rs.UID) != ref.UID:
		return ref, nil // a new ReplicaSet with the same name; the pod's owner is gone
	}
	got = ref
	if c := metav1.GetControllerOf(rs); c != nil && c.Kind == "Deployment" {
		got = OwnerRef{APIVersion: c.APIVersion, Kind: c.Kind, Name: c.Name, UID: string(c.UID)}
	}
	r.mu.Lock()
	r.cache[ref.UID] = got
	r.mu.Unlock()
	return got, nil
}
