package agent

import (
	"testing"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

func TestReclaimLogSaysWhatTheEvictionActedOn(t *testing.T) {
	const mi = 1 << 20
	view := policy.ReclaimView{Signal: signal.AllocatableMemoryAvailable, Known: true, WorkingSet: 600 * mi,
		NonReclaimable: 1500 * mi, Effective: 1500 * mi, SomeAvg10: 3.5, FullAvg10: 1.25, PSIKnown: true,
		RefaultRate: 45 * mi, RefaultKnown: true}
	confirmed := view
	confirmed.Confirmed, confirmed.Effective, confirmed.SomeAvg10 = true, 600*mi, 12.5
	unknown := policy.ReclaimView{Signal: signal.AllocatableMemoryAvailable, Why: "no memory.stat of the pods scope",
		WorkingSet: 300 * mi, NonReclaimable: 300 * mi, Effective: 300 * mi}
	for _, tc := range []struct {
		name  string
		views []policy.ReclaimView
		sig   string
		want  string
	}{
		{"policy without reclaim views logs nothing", nil, "allocatableMemory.available", ""},
		{"another signal's view is not this eviction's", []policy.ReclaimView{view}, "memory.available", ""},
		{"the estimate alone", []policy.ReclaimView{view}, "allocatableMemory.available",
			"acted on estimate: confirmed=false backstop=false working-set=600Mi estimate=1500Mi effective=1500Mi " +
				"psi-some=3.50 psi-full=1.25 refaults=45Mi/s activations=unknown"},
		{"confirmed pressure acts on the lower", []policy.ReclaimView{confirmed}, "allocatableMemory.available",
			"acted on lower (confirmed): confirmed=true backstop=false working-set=600Mi estimate=1500Mi effective=600Mi " +
				"psi-some=12.50 psi-full=1.25 refaults=45Mi/s activations=unknown"},
		{"an unknown estimate says why", []policy.ReclaimView{unknown}, "allocatableMemory.available",
			"acted on working set (estimate unknown: no memory.stat of the pods scope): confirmed=false backstop=false " +
				"working-set=300Mi estimate=300Mi effective=300Mi psi-some=0.00 psi-full=0.00 refaults=unknown activations=unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reclaimLog(policy.Plan{Reclaim: tc.views}, tc.sig); got != tc.want {
				t.Errorf("reclaimLog() = %q, want %q", got, tc.want)
			}
		})
	}
}
