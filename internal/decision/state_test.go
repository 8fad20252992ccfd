package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStepDoesNotModifyItsInputStateAndIsDeterministic(t *testing.T) {
	cfg := hard(t, "memory.available", "100Mi")
	st, _ := Step(State{}, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Config: cfg})
	before := cloneState(st)
	in := Input{Now: at(500), Snapshot: memObs(4*gi, 16*gi, at(500)), Candidates: r1Pods(), Config: cfg}
	next1, d1 := Step(st, in)
	next2, d2 := Step(st, in)
	if diff := cmp.Diff(st, before); diff != "" {
		t.Errorf("input state modified (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(next1, next2); diff != "" {
		t.Errorf("two runs differ in state (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(d1, d2); diff != "" {
		t.Errorf("two runs differ in decision (-first +second):\n%s", diff)
	}
}

func cloneState(s State) State {
	out := s
	out.FirstObservedAt = copyMap(s.FirstObservedAt)
	out.ConditionsLastObservedAt = copyMap(s.ConditionsLastObservedAt)
	out.LastObservations = copyMap(s.LastObservations)
	out.ThresholdsMet = append(s.ThresholdsMet[:0:0], s.ThresholdsMet...)
	out.Conditions = append(s.Conditions[:0:0], s.Conditions...)
	return out
}

func copyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
