package janitor

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// TestDeletePodSendsGraceZeroWithPreconditions checks the request itself: the API server's
// handling of grace 0 on a pod already marked for deletion is checked at level 1
// (TestJanitorOnControlPlane/terminating…).
func TestDeletePodSendsGraceZeroWithPreconditions(t *testing.T) {
	pod := evictedPod("a", "p", t0)
	pod.ResourceVersion = "42"
	c := fake.NewClientset(pod)
	deleted, err := DeletePod(context.Background(), c, PodRef{"a", "p", string(pod.UID), "42"}, false)
	if !deleted || err != nil {
		t.Fatalf("DeletePod() = %v, %v; want true, nil", deleted, err)
	}
	var got []metav1.DeleteOptions
	for _, a := range c.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			got = append(got, d.DeleteOptions)
		}
	}
	uid := pod.UID
	want := []metav1.DeleteOptions{{GracePeriodSeconds: ptr.To[int64](0),
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: ptr.To("42")}}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("delete options (-got +want):\n%s", diff)
	}
}

func TestDeletePodAnswers(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	cases := []struct {
		name        string
		answer      error
		wantDeleted bool
		wantErr     error
	}{
		{name: "deleted", wantDeleted: true},
		{name: "404 is done, not an error", answer: apierrors.NewNotFound(gr, "p")},
		{name: "409 is ErrChanged", answer: apierrors.NewConflict(gr, "p", errors.New("precondition failed")), wantErr: ErrChanged},
		{name: "other errors are returned for a retry", answer: apierrors.NewServiceUnavailable("etcd"), wantErr: errAny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientset(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p", UID: types.UID("u")}})
			c.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				return tc.answer != nil, nil, tc.answer
			})
			deleted, err := DeletePod(context.Background(), c, PodRef{"a", "p", "u", "1"}, false)
			if deleted != tc.wantDeleted {
				t.Errorf("deleted %v; want %v", deleted, tc.wantDeleted)
			}
			switch {
			case tc.wantErr == nil && err != nil, tc.wantErr != nil && err == nil:
				t.Errorf("err %v; want %v", err, tc.wantErr)
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Errorf("err %v; want errors.Is %v", err, tc.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")
