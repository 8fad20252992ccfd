package actuate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func pdbError(cause bool) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	if cause {
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget web needs 1 healthy pods and has 1 currently"})
	}
	return err
}

func TestClassify(t *testing.T) {
	podGR := schema.GroupResource{Resource: "pods"}
	uidConflict := apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, "web-0",
		errors.New("the UID in the precondition (a) does not match the UID in record (b). The object might have been deleted and then recreated"))
	deleteUIDConflict := apierrors.NewConflict(podGR, "web-0",
		errors.New("Precondition failed: UID in precondition: a, UID in object meta: b"))
	multiPDB := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500,
		Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}}
	cases := []struct {
		name string
		err  error
		want Outcome
	}{
		{"no error is an eviction", nil, OutcomeEvicted},
		{"404 means the pod is already gone", apierrors.NewNotFound(podGR, "web-0"), OutcomeGone},
		{"eviction UID precondition mismatch means our pod is gone", uidConflict, OutcomeGone},
		{"delete UID precondition mismatch means our pod is gone", fmt.Errorf("delete: %w", deleteUIDConflict), OutcomeGone},
		{"429 with a DisruptionBudget cause is a PDB refusal", pdbError(true), OutcomeBlockedByPDB},
		{"429 with the refusal text but no cause is a PDB refusal", pdbError(false), OutcomeBlockedByPDB},
		{"more than one PDB is a PDB refusal", multiPDB, OutcomeBlockedByPDB},
		{"429 without PDB is API throttling, retryable", apierrors.NewTooManyRequests("slow down", 1), OutcomeUnavailable},
		{"503 is unavailable", apierrors.NewServiceUnavailable("etcd"), OutcomeUnavailable},
		{"server timeout is unavailable", apierrors.NewServerTimeout(podGR, "create", 1), OutcomeUnavailable},
		{"a refused connection is unavailable", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, OutcomeUnavailable},
		{"a context deadline is unavailable", fmt.Errorf("evict: %w", context.DeadlineExceeded), OutcomeUnavailable},
		{"a rate limiter refusal after 429 answers is unavailable",
			&AnsweredError{Answers: 3, Err: errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")}, OutcomeUnavailable},
		{"other 409 is a failure", apierrors.NewConflict(podGR, "web-0", errors.New("resourceVersion changed")), OutcomeFailed},
		{"403 is a failure", apierrors.NewForbidden(podGR, "web-0", errors.New("rbac")), OutcomeFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

func TestOnlyTransportErrorsMeanTheAPIIsUnreachable(t *testing.T) {
	podGR := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a refused connection", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
		{"a client-side timeout", fmt.Errorf("evict: %w", context.DeadlineExceeded), true},
		{"503 is an answer", apierrors.NewServiceUnavailable("etcd"), false},
		{"429 is an answer", apierrors.NewTooManyRequests("slow down", 1), false},
		{"500 is an answer", apierrors.NewInternalError(errors.New("boom")), false},
		{"504 server timeout is an answer", apierrors.NewServerTimeout(podGR, "create", 1), false},
		{"wrapped 503 is an answer", fmt.Errorf("evict: %w", apierrors.NewServiceUnavailable("etcd")), false},
		{"a timeout during client-go's Retry-After retries follows answers",
			fmt.Errorf("evict: %w", &AnsweredError{Answers: 2, Err: context.DeadlineExceeded}), false},
		{"no error", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsUnreachable(tc.err); got != tc.want {
				t.Errorf("IsUnreachable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestOutcomeDoneAndRetryable(t *testing.T) {
	done := map[Outcome]bool{OutcomeEvicted: true, OutcomeGone: true, OutcomeKilled: true}
	retry := map[Outcome]bool{OutcomeUnavailable: true, OutcomeBlockedByPDB: true}
	for _, o := range []Outcome{OutcomeEvicted, OutcomeGone, OutcomeBlockedByPDB, OutcomeUnavailable, OutcomeFailed,
		OutcomeKilled, OutcomeDryRun} {
		if o.Done() != done[o] || o.Retryable() != retry[o] {
			t.Errorf("%s: Done %v Retryable %v, want %v %v", o, o.Done(), o.Retryable(), done[o], retry[o])
		}
	}
}
