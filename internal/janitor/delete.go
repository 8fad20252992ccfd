package janitor

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// ErrChanged means the pod's UID or resourceVersion no longer matches what was selected: it was
// not deleted.
var ErrChanged = errors.New("pod changed since it was selected")

// PodRef identifies the exact version of a pod that was selected.
type PodRef struct {
	Namespace, Name, UID, ResourceVersion string
}

// DeletePod deletes exactly the selected version of a pod, with UID and resourceVersion
// preconditions. It returns (false, nil) when the pod is already gone and ErrChanged when it
// changed since selection. With dryRun the API server runs every check and persists nothing.
//
// The grace period is 0. The API server uses 0 for a terminal pod anyway, but a terminal pod that
// was already marked for deletion keeps the grace it was marked with: a pod deleted gracefully
// while it ran (grace 30 s, its kubelet gone), or a pod whose deletion stopped between the API
// server's two steps (deletionTimestamp written, the object not yet removed: a client killed
// mid-DELETE). A DELETE without a grace period leaves such a pod as it is; grace 0 removes it.
// Pods with finalizers are never selected while terminating (Select), so the janitor does not
// race their owners.
func DeletePod(ctx context.Context, c kubernetes.Interface, ref PodRef, dryRun bool) (bool, error) {
	uid, rv := types.UID(ref.UID), ref.ResourceVersion
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
		GracePeriodSeconds: ptr.To[int64](0)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	err := c.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, opts)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	case apierrors.IsConflict(err):
		return false, fmt.Errorf("delete pod %s/%s uid %s resourceVersion %s: %w: %w", ref.Namespace, ref.Name, ref.UID, rv, ErrChanged, err)
	}
	return false, fmt.Errorf("delete pod %s/%s: %w", ref.Namespace, ref.Name, err)
}
