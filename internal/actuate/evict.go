package actuate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
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
	ctx, answers := countAnswers(ctx)
	err := answered(e.Client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev), answers)
	if err != nil {
		err = fmt.Errorf("evict pod %s/%s uid %s: %w", pod.Namespace, pod.Name, pod.UID, err)
	}
	return Classify(err), err
}

// Delete deletes pod with the grace period, bypassing PodDisruptionBudgets.
func (e *Evictor) Delete(ctx context.Context, pod PodRef, graceSeconds int64) (Outcome, error) {
	ctx, answers := countAnswers(ctx)
	err := answered(e.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, *deleteOptions(pod, graceSeconds)), answers)
	if err != nil {
		err = fmt.Errorf("delete pod %s/%s uid %s: %w", pod.Namespace, pod.Name, pod.UID, err)
	}
	return Classify(err), err
}

// Ended reads pod again and says why it is over for the ladder: "not found", "replaced by uid X",
// "phase Failed" or "phase Succeeded" (e.g. the kubelet evicted it), "terminating"; "" when it is still
// there. The read is a LIST by name (the agent may list pods; it has no GET), fresh from the API server.
// The ladder asks after its PDB fallback wait: the Eviction API ignores PodDisruptionBudgets for a
// terminal pod, so asking again would delete the kubelet's Evicted shell, the evidence of its eviction.
func (e *Evictor) Ended(ctx context.Context, pod PodRef) (string, error) {
	l, err := e.Client.CoreV1().Pods(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", pod.Name).String()})
	if err != nil {
		return "", fmt.Errorf("read pod %s/%s uid %s again: %w", pod.Namespace, pod.Name, pod.UID, err)
	}
	for i := range l.Items {
		if p := &l.Items[i]; p.Name == pod.Name {
			return podEnded(p, pod.UID), nil
		}
	}
	return "not found", nil
}

// podEnded says why p is over for the eviction of uid ("" when it is not).
func podEnded(p *corev1.Pod, uid types.UID) string {
	switch {
	case p.UID != uid:
		return "replaced by uid " + string(p.UID)
	case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
		return "phase " + string(p.Status.Phase)
	case p.DeletionTimestamp != nil:
		return "terminating"
	}
	return ""
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

// AnsweredError is the error of a call that failed without an answer of its own although the API
// server did answer during the call: client-go retries a 429 or 5xx that carries Retry-After (up to
// ten times, waiting as told), and when the call's context ends during such a wait, or a retry times
// out, the error is a bare timeout. The server was up and answering (throttling, overloaded), so this
// is not "the API is unreachable" (IsUnreachable is false) but a "try later" (OutcomeUnavailable).
type AnsweredError struct {
	// Answers is the number of HTTP answers (any status) the call received.
	Answers int
	Err     error
}

func (e *AnsweredError) Error() string {
	return fmt.Sprintf("after %d http answers of the api server: %v", e.Answers, e.Err)
}

func (e *AnsweredError) Unwrap() error { return e.Err }

// countAnswers returns ctx with an httptrace hook counting the HTTP answers the calls made with it
// receive: GotFirstResponseByte fires for every response, whatever its status and however client-go
// handles it (a Retry-After retry never reaches the caller otherwise). httptrace composes the hook with
// client-go's own trace. A client without HTTP (a fake clientset) counts nothing.
func countAnswers(ctx context.Context) (context.Context, *atomic.Int32) {
	n := new(atomic.Int32)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() { n.Add(1) }}), n
}

// answered wraps err in an AnsweredError when it is not itself an answer (an API status) although the
// call received answers.
func answered(err error, answers *atomic.Int32) error {
	var st apierrors.APIStatus
	if err == nil || errors.As(err, &st) || answers.Load() == 0 {
		return err
	}
	return &AnsweredError{Answers: int(answers.Load()), Err: err}
}

// IsUnreachable reports a transport error: no HTTP answer came back (refused or reset connection,
// DNS, TLS, a client-side timeout). Only this counts as "the API is down" for the cgroup-kill rung,
// which ignores PodDisruptionBudgets: a 429 or 5xx is an answer from a working API server (throttling,
// an overloaded or failing backend) and is retried through the API instead, also when client-go's
// Retry-After retries of it end in a timeout (AnsweredError).
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var st apierrors.APIStatus
	var ae *AnsweredError
	if errors.As(err, &st) || errors.As(err, &ae) {
		return false
	}
	return isTransport(err)
}

// isTransport reports an error of the HTTP client rather than an answer: a timeout, a network error.
func isTransport(err error) bool {
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

// isUnavailable reports an answer that says "try later" (429, 5xx, timeouts), a call that timed out
// after such answers (AnsweredError), or no answer at all.
func isUnavailable(err error) bool {
	var ae *AnsweredError
	return apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) ||
		errors.As(err, &ae) || IsUnreachable(err)
}
