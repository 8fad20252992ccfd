package actuate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Messages of the apiserver's eviction subresource that mean "a PodDisruptionBudget refuses".
const (
	pdbRefusal   = "Cannot evict pod as it would violate the pod's disruption budget"
	pdbAmbiguous = "more than one PodDisruptionBudget" // a 500 the eviction subresource never gets past
)

// Evictor evicts and deletes pods through the API, always with a UID precondition.
type Evictor struct {
	Client kubernetes.Interface
}

// Evict asks the Eviction API to evict pod with the grace period and returns the classified outcome
// and, unless evicted, the error.
func (e *Evictor) Evict(ctx context.Context, pod PodRef, graceSeconds int64) (Outcome, error) {
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		DeleteOptions: deleteOptions(pod, graceSeconds),
	}
	err := e.Client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev)
	if err != nil {
		err = fmt.Errorf("evict pod %s/%s uid %s: %w", pod.Namespace, pod.Name, pod.UID, err)
	}
	return Classify(err), err
}

// Delete deletes pod with the grace period, bypassing PodDisruptionBudgets.
func (e *Evictor) Delete(ctx context.Context, pod PodRef, graceSeconds int64) (Outcome, error) {
	err := e.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, *deleteOptions(pod, graceSeconds))
	if err != nil {
		err = fmt.Errorf("delete pod %s/%s uid %s: %w", pod.Namespace, pod.Name, pod.UID, err)
	}
	return Classify(err), err
}

func deleteOptions(pod PodRef, graceSeconds int64) *metav1.DeleteOptions {
	uid := pod.UID
	grace := graceSeconds
	return &metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	}
}

// Classify maps an Eviction API or DELETE error to an Outcome; nil is OutcomeEvicted.
func Classify(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeEvicted
	case apierrors.IsNotFound(err), isUIDMismatch(err):
		return OutcomeGone
	case IsPDBRefusal(err):
		return OutcomeBlockedByPDB
	case isUnavailable(err):
		return OutcomeUnavailable
	}
	return OutcomeFailed
}

// IsPDBRefusal reports a 429 that carries a DisruptionBudget cause or the apiserver's refusal text, or
// the 500 "This pod has more than one PodDisruptionBudget" (the Eviction API can never evict that pod).
func IsPDBRefusal(err error) bool {
	if err != nil && strings.Contains(err.Error(), pdbAmbiguous) {
		return true
	}
	if !apierrors.IsTooManyRequests(err) {
		return false
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	s := st.Status()
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == policyv1.DisruptionBudgetCause {
				return true
			}
		}
	}
	return strings.Contains(s.Message, pdbRefusal)
}

// isUIDMismatch reports the 409 the apiserver returns when the UID precondition does not match: the pod
// we meant is gone and another one has its name.
func isUIDMismatch(err error) bool {
	if !apierrors.IsConflict(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "UID in precondition") || strings.Contains(msg, "the UID in the precondition")
}

// IsUnreachable reports a transport error: no HTTP answer came back (refused or reset connection,
// DNS, TLS, a client-side timeout). Only this counts as "the API is down" for the cgroup-kill rung,
// which ignores PodDisruptionBudgets: a 429 or 5xx is an answer from a working API server (throttling,
// an overloaded or failing backend) and is retried through the API instead.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return true
	}
	var operr *net.OpError
	return errors.As(err, &operr) || strings.Contains(err.Error(), "connection refused")
}

// isUnavailable reports an answer that says "try later" (429, 5xx, timeouts) or no answer at all.
func isUnavailable(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) ||
		IsUnreachable(err)
}
