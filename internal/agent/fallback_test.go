package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/policy"
)

// TestAPDBFallbackWaitDoesNotHoldTheNextVictim: under a hard threshold the first victim's PDB refuses
// and its ladder goes on in the background (the fallback wait); the same sync asks for the next victim
// at once, and the fallback's final result is the next sync's outcome. Before, the sync waited the five
// seconds inside the ladder, and the soak run saw kernel OOM kills during that wait.
func TestAPDBFallbackWaitDoesNotHoldTheNextVictim(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	h.ladder.results = []actuate.Result{{Outcome: actuate.OutcomeBlockedByPDB, Rung: actuate.RungEviction, Continuing: true,
		Attempts: []actuate.Attempt{{Rung: actuate.RungEviction, Outcome: actuate.OutcomeBlockedByPDB}}}}
	h.ladder.finals = []actuate.Result{{Outcome: actuate.OutcomeEvicted, Rung: actuate.RungDelete,
		Attempts: []actuate.Attempt{{Rung: actuate.RungEviction, Outcome: actuate.OutcomeBlockedByPDB},
			{Rung: actuate.RungEviction, Outcome: actuate.OutcomeBlockedByPDB}, {Rung: actuate.RungDelete, Outcome: actuate.OutcomeEvicted}}}}
	h.pods.set(pod("guarded", "u-guarded", "besteffort", ""), pod("hog", "u-hog", "besteffort", "", priority(1000)))
	h.tree.setPod("u-guarded", "besteffort", 100*mi)
	h.tree.setPod("u-hog", "besteffort", 1900*mi) // available 48Mi: under the hard 100Mi; guarded alone is not enough
	h.ladder.hold = make(chan struct{})
	res := h.sync(time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"guarded", "hog"}); d != "" {
		t.Fatalf("requests of the first sync (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
	h.pods.set(pod("guarded", "u-guarded", "besteffort", "")) // hog left; still under pressure
	h.tree.setPod("u-hog", "besteffort", 0)
	h.tree.setPod("u-guarded", "besteffort", 2000*mi)
	res = h.sync(15 * time.Second) // past the PDB retry: the policy would plan guarded again
	if d := cmp.Diff(h.ladder.names(), []string{"guarded", "hog"}); d != "" {
		t.Errorf("requests while guarded's fallback runs (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
	close(h.ladder.hold)
	h.agent.bg.Wait() // the background ladder reported its final result
	late := h.agent.later.take()
	want := []policy.Outcome{{UID: "u-guarded", Action: policy.ActionEvict, Result: policy.ResultEvicted, API: policy.ContactAnswered, At: h.clock.Now()}}
	if d := cmp.Diff(late, want); d != "" {
		t.Fatalf("the fallback's final outcome (-got +want):\n%s", d)
	}
	h.agent.later.add(late[0])
	h.sync(time.Second)
	if got := h.agent.later.take(); len(got) != 0 {
		t.Errorf("the next sync left the final outcome untaken: %+v", got)
	}
}
