package actuate

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Owner is the workload a pod belongs to: the controller users look at (a Deployment rather than its
// ReplicaSet). The zero Owner means a bare pod.
type Owner struct {
	APIVersion string    `json:"apiVersion,omitempty"`
	Kind       string    `json:"kind,omitempty"`
	Namespace  string    `json:"namespace,omitempty"`
	Name       string    `json:"name,omitempty"`
	UID        types.UID `json:"uid,omitempty"`
}

// IsZero reports a bare pod.
func (o Owner) IsZero() bool { return o.Kind == "" && o.Name == "" }

// String is kind/namespace/name.
func (o Owner) String() string {
	if o.IsZero() {
		return "<none>"
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// same reports the same workload: by UID when both have one, else by kind, namespace and name.
func (o Owner) same(p Owner) bool {
	if o.IsZero() || p.IsZero() {
		return false
	}
	if o.UID != "" && p.UID != "" {
		return o.UID == p.UID
	}
	return o.Kind == p.Kind && o.Namespace == p.Namespace && o.Name == p.Name
}

// ControllerOf returns the pod's controller owner reference as an Owner (zero for a bare pod).
func ControllerOf(pod *v1.Pod) Owner {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return Owner{}
	}
	return Owner{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: pod.Namespace, Name: ref.Name, UID: ref.UID}
}

// Workload lifts a ReplicaSet owner to its Deployment, given the ReplicaSet (nil when it is gone). A
// ReplicaSet with another UID than the reference is a new one under the same name: the pod's own
// ReplicaSet is gone, and the reference is kept. Other kinds (StatefulSet, DaemonSet, Job, ...) are
// their own workload.
func Workload(o Owner, rs *appsv1.ReplicaSet) Owner {
	if o.Kind != "ReplicaSet" || rs == nil || (o.UID != "" && rs.UID != o.UID) {
		return o
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != "Deployment" {
		return o
	}
	return Owner{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: o.Namespace, Name: ref.Name, UID: ref.UID}
}

// OwnerResolver resolves a pod's workload through the API.
type OwnerResolver struct {
	Client kubernetes.Interface
}

// Resolve returns the pod's workload. On error it returns the nearest owner it knows with the error.
func (r *OwnerResolver) Resolve(ctx context.Context, pod *v1.Pod) (Owner, error) {
	o := ControllerOf(pod)
	if o.Kind != "ReplicaSet" {
		return o, nil
	}
	rs, err := r.Client.AppsV1().ReplicaSets(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return o, nil
	case err != nil:
		return o, fmt.Errorf("get replicaset %s/%s of pod %s: %w", o.Namespace, o.Name, pod.Name, err)
	}
	return Workload(o, rs), nil
}
