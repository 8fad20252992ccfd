package cli

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/sim"
)

// The model's timings a recording gives: each is taken from the recording unless --set names it.

// setByFlag reports whether --set names one of keys.
func setByFlag(sets []assignment, keys ...string) bool {
	for _, a := range sets {
		for _, k := range keys {
			if a.key == k {
				return true
			}
		}
	}
	return false
}

// phase sets the kubelet's loop phase from the recording, unless --set timing.firstSync gives it.
func (in *simInput) phase(t *sim.Timing, sets []assignment) {
	if setByFlag(sets, "timing.firstSync", "timing.syncDuration") {
		return
	}
	ph, ok := in.recording.InferPhase(t.Housekeeping)
	if !ok {
		in.notes = append(in.notes, fmt.Sprintf("the kubelet's housekeeping loop could not be inferred from the recording "+
			"(%d of %d memory samples fit a loop): its first sync is at the start; set it with --set timing.firstSync=DURATION",
			ph.Agree, ph.Samples))
		return
	}
	t.FirstSync, t.SyncDuration = ph.FirstSync, ph.Period-t.Housekeeping
	from := fmt.Sprintf("its syncs refresh the memory samples: %d of %d fit", ph.Agree, ph.Samples)
	if ph.FromStatsTimes {
		from = fmt.Sprintf("the kubelet's memory stats times to the millisecond: its last %d syncs of %d stats times", ph.Agree, ph.Samples)
	}
	in.notes = append(in.notes, fmt.Sprintf("the kubelet's housekeeping loop, inferred from the recording (%s): a sync "+
		"every %s, the first at %s; override with --set timing.firstSync=DURATION --set timing.syncDuration=DURATION",
		from, ph.Period, sim.FormatOffset(ph.FirstSync)))
}

// localStep makes the model step as often as the recording's local samples when they are more frequent
// than timing.step (and at least 10ms), unless --set timing.step says otherwise: the agent's run then
// sees every read of the agent's view (recorded at the agent's 25ms poll, a dip between two 100ms
// steps, or a fall fast enough for the eviction lead, is the agent's to see).
func (in *simInput) localStep(t *sim.Timing, sets []assignment) {
	if setByFlag(sets, "timing.step") {
		return
	}
	every := in.recording.LocalInterval().Round(time.Millisecond)
	if len(in.recording.Local) == 0 || every < 10*time.Millisecond || every >= t.Step {
		return
	}
	t.Step = every
	in.notes = append(in.notes, fmt.Sprintf("the model steps every %s, as often as the recording's local samples "+
		"(override with --set timing.step=DURATION)", every))
}

// agentRequest sets how long pressure-agent's shell takes per eviction of a plan from the recording's
// own evictions (sim.Recording.AgentRequest), unless --set timing.agentRequest gives it.
func (in *simInput) agentRequest(t *sim.Timing, sets []assignment) {
	if setByFlag(sets, "timing.agentRequest") {
		return
	}
	d, gaps := in.recording.AgentRequest()
	if gaps == 0 {
		return
	}
	t.AgentRequest = d.Round(time.Millisecond)
	in.notes = append(in.notes, fmt.Sprintf("pressure-agent carries out a plan's evictions one after another, %s each, "+
		"and syncs again after the last: the median of %d gaps between its recorded evictions under %s apart "+
		"(override with --set timing.agentRequest=DURATION)", t.AgentRequest, gaps, sim.PlanGap))
}

// agentEviction sets how long pressure-agent's evictions take from the request until the pod's memory
// is free: a pod the recorded agent evicted as long as it took in the recording, any other pod the
// median of those (sim.Recording.AgentEviction). --set timing.agentEviction gives every pod that time.
func (in *simInput) agentEviction(o *sim.Options, sets []assignment) {
	if setByFlag(sets, "timing.agentEviction") {
		return
	}
	d, n := in.recording.AgentEviction(o.Timing.AgentRequest)
	if n == 0 {
		return
	}
	o.Timing.AgentEviction, o.RecordedReleases = d.Round(time.Millisecond), true
	in.notes = append(in.notes, fmt.Sprintf("pressure-agent's evictions free the pod's memory as long after the request as "+
		"the recorded agent's did, from its ledger's time less timing.agentRequest to where the local reads lose the pod "+
		"(%d pods); any other pod %s, their median (override for every pod with --set timing.agentEviction=DURATION)", n, o.Timing.AgentEviction))
}
