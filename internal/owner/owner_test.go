package owner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/policy"
)

func controlled(kind, name string, uid types.UID) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "shop", Name: name + "-x", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "Other", Name: "not-controller", UID: "nc"},
		{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)},
	}}
}

func TestWorkload(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: controlled("Deployment", "web", "uid-deploy")}
	rs.UID = "uid-rs"
	bareRS := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "solo", UID: "uid-solo"}}
	cases := []struct {
		name string
		pod  v1.Pod
		rs   *appsv1.ReplicaSet
		want policy.Workload
	}{
		{"a ReplicaSet owned by a Deployment resolves to the Deployment",
			v1.Pod{ObjectMeta: controlled("ReplicaSet", "web-5d4", "uid-rs")}, rs,
			policy.Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-deploy"}},
		{"a ReplicaSet without a Deployment is the workload",
			v1.Pod{ObjectMeta: controlled("ReplicaSet", "solo", "uid-solo")}, bareRS,
			policy.Workload{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "solo", UID: "uid-solo"}},
		{"a recreated ReplicaSet with another UID is not followed",
			v1.Pod{ObjectMeta: controlled("ReplicaSet", "web-5d4", "uid-old-rs")}, rs,
			policy.Workload{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d4", UID: "uid-old-rs"}},
		{"a gone ReplicaSet is the workload",
			v1.Pod{ObjectMeta: controlled("ReplicaSet", "web-5d4", "uid-rs")}, nil,
			policy.Workload{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d4", UID: "uid-rs"}},
		{"a StatefulSet is its own workload",
			v1.Pod{ObjectMeta: controlled("StatefulSet", "db", "uid-sts")}, nil,
			policy.Workload{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "shop", Name: "db", UID: "uid-sts"}},
		{"a DaemonSet is its own workload",
			v1.Pod{ObjectMeta: controlled("DaemonSet", "agent", "uid-ds")}, nil,
			policy.Workload{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "shop", Name: "agent", UID: "uid-ds"}},
		{"a bare pod has no workload", v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare"}}, nil, policy.Workload{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Workload(ControllerOf(&tc.pod), tc.rs)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("workload (-got +want):\n%s", diff)
			}
		})
	}
}
