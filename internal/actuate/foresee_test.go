package actuate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/policy"
)

// TestLadderDoesWhatSimulateAndExplainForesee carries out the ladder against an API whose answers are
// known (a PodDisruptionBudget that never allows, or nothing in the way) and compares the calls it made,
// the time it waited and its result with policy.Foresee on the same input: what kubectl pressure
// simulate runs for each planned eviction and explain shows for a PDB-protected victim
// (policy.IfRefused is Foresee after the first refusal). The simulator and explain can only show the agent's plan if the agent follows it.
func TestLadderDoesWhatSimulateAndExplainForesee(t *testing.T) {
	noDelete := full
	noDelete.AllowDelete = false
	for _, tc := range []struct {
		name string
		cfg  LadderConfig
		hard bool
		pdb  bool
		want []string // the calls, the agent's own
	}{
		{"a hard eviction of a PDB-protected pod waits, asks once more, then DELETEs", full, true, true,
			[]string{"evict shop/web-0", "evict shop/web-0", "delete shop/web-0"}},
		{"a soft eviction of a PDB-protected pod is refused and never DELETEd", full, false, true,
			[]string{"evict shop/web-0"}},
		{"a hard eviction of a PDB-protected pod without allowDelete is refused", noDelete, true, true,
			[]string{"evict shop/web-0"}},
		{"an unprotected pod is evicted through the Eviction API", full, true, false,
			[]string{"evict shop/web-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLadderRun(tc.cfg)
			api := policy.APIAccepts
			if tc.pdb {
				api = policy.PDBRefuses
				r.script.evictions = []error{pdbError(true), pdbError(true), pdbError(true)}
			}
			res := r.evict(t, request(tc.hard))
			if d := cmp.Diff(r.script.calls, tc.want); d != "" {
				t.Fatalf("the agent's calls (-got +want):\n%s", d)
			}
			moves, esc := policy.Foresee(tc.cfg, tc.hard, api)
			var foreseen []string
			for _, m := range moves {
				switch m.Kind {
				case policy.MoveEvict:
					foreseen = append(foreseen, "evict shop/web-0")
				case policy.MoveDelete:
					foreseen = append(foreseen, "delete shop/web-0")
				}
			}
			if d := cmp.Diff(foreseen, r.script.calls); d != "" {
				t.Errorf("foreseen calls (-foreseen +agent):\n%s", d)
			}
			if got, want := r.clock.Since(t0), policy.Waited(moves); got != want {
				t.Errorf("the agent waited %s, foreseen %s", got, want)
			}
			last := esc.Last()
			if string(res.Rung) != string(last.Rung) || string(res.Outcome) != string(last.Result) {
				t.Errorf("the agent ended %s:%s, foreseen %s:%s", res.Rung, res.Outcome, last.Rung, last.Result)
			}
		})
	}
}
