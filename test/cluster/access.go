package cluster

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Subject is who a SubjectAccessReview asks about: a user name and its groups.
type Subject struct {
	User   string
	Groups []string
}

// ServiceAccountSubject is the identity a token of ServiceAccount namespace/name authenticates as.
func ServiceAccountSubject(namespace, name string) Subject {
	return Subject{
		User:   "system:serviceaccount:" + namespace + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// accessPoll is how often WaitUntilAllowed asks again.
const accessPoll = 100 * time.Millisecond

// WaitUntilAllowed asks the API server's authorizer, with SubjectAccessReviews, whether who may do
// attrs, until it says yes or ctx ends. RBAC's authorizer reads Roles and bindings from informer
// caches, so a binding just created is not in force at once: a test that writes RBAC and then uses
// it waits here first. The error names the subject, the request and the authorizer's last reason.
func (cp *ControlPlane) WaitUntilAllowed(ctx context.Context, who Subject, attrs authorizationv1.ResourceAttributes) error {
	c, err := cp.Client()
	if err != nil {
		return err
	}
	start := time.Now()
	var reason string
	for polls := 0; ; polls++ {
		r, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: who.User, Groups: who.Groups, ResourceAttributes: &attrs},
		}, metav1.CreateOptions{})
		switch {
		case err != nil:
			reason = err.Error()
		case r.Status.Allowed:
			if polls > 0 { // a wait worth reporting in make test's table
				reportWait("rbac in force", time.Since(start))
			}
			return nil
		default:
			reason = r.Status.Reason
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s may not %s %s/%s in %q after %s (last answer: %q): %w",
				who.User, attrs.Verb, attrs.Group, attrs.Resource, attrs.Namespace, time.Since(start).Round(time.Millisecond), reason, ctx.Err())
		case <-time.After(accessPoll):
		}
	}
}
