package chartinstall

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// WaitJanitor waits until the janitor Deployment namespace/name has all its replicas Ready (the chart
// names it <release>-janitor), and returns how many that is.
func WaitJanitor(ctx context.Context, c kubernetes.Interface, namespace, name string) (int32, error) {
	var last string
	for {
		d, err := c.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			want := int32(1)
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
			if d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas == want && d.Status.UpdatedReplicas == want {
				return want, nil
			}
			last = fmt.Sprintf("%d of %d replicas Ready, %d updated", d.Status.ReadyReplicas, want, d.Status.UpdatedReplicas)
		} else {
			last = err.Error()
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return 0, fmt.Errorf("wait for janitor deployment %s/%s (last: %s): %w", namespace, name, last, err)
		}
	}
}
