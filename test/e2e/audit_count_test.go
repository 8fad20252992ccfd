package e2e

import (
	"testing"

	"github.com/kube-pressure/pressure/test/evictaudit"
)

// oneSuccess: a retry that failed before the success is allowed, a second request after it (a
// duplicate), a second success, another pod or no success are not.
func TestOneSuccessAllowsFailedRetriesOnlyBeforeTheSuccess(t *testing.T) {
	req := func(pod string, code int32) evictaudit.Request { return evictaudit.Request{Pod: pod, Code: code} }
	for _, tc := range []struct {
		name string
		reqs []evictaudit.Request
		want int
	}{
		{"one", []evictaudit.Request{req("stress", 201)}, 0},
		{"after a 504 and an unanswered one (API server restarting)", []evictaudit.Request{req("stress", 504), req("stress", 0), req("stress", 201)}, 2},
		{"none", nil, -1},
		{"only failures", []evictaudit.Request{req("stress", 504)}, -1},
		{"a duplicate after the success", []evictaudit.Request{req("stress", 201), req("stress", 429)}, -1},
		{"two successes", []evictaudit.Request{req("stress", 201), req("stress", 201)}, -1},
		{"another pod", []evictaudit.Request{req("other", 504), req("stress", 201)}, -1},
		{"the wrong pod", []evictaudit.Request{req("other", 201)}, -1},
	} {
		if got := oneSuccess(tc.reqs, "stress"); got != tc.want {
			t.Errorf("%s: oneSuccess = %d, want %d", tc.name, got, tc.want)
		}
	}
}
