package janitor

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stripManagedFields is the informer transform: managed fields are never read and are a large
// share of a cached pod.
func stripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
