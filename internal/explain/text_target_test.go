package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/signal"
)

func TestTheTargetLineSaysWhyItsGoalIsNotTheThresholdPlusMinimumReclaim(t *testing.T) {
	backstop := "the kubelet's threshold + the backstop's margin: the working set is acted on only to keep the kubelet from acting"
	for _, tc := range []struct {
		name, why, want string
		growth          int64
	}{
		{"the agent's goal is its threshold + minimum reclaim", "", "(threshold + minimum reclaim)", 0},
		{"a goal of the backstop says so", backstop, "(" + backstop + ")", 0},
		{"a walk that stops at the growing pods says how fast they must grow", backstop,
			"no more once the pods taken grow 10Mi/s (usage other than page cache: their eviction stops the fall)", 10 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			p := &printer{w: &b}
			p.pressure(&Pressure{Policy: "reclaim-aware", ThresholdsMet: []string{"allocatableMemory.available<356Mi"},
				Target: &AgentTarget{Signal: "allocatableMemory.available", GoalWhy: tc.why, MaxPods: 3,
					sig: signal.AllocatableMemoryAvailable, available: 188 << 20, goal: 228 << 20, need: 40 << 20, growth: tc.growth}})
			if p.err != nil {
				t.Fatal(p.err)
			}
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("output has no %q:\n%s", tc.want, b.String())
			}
		})
	}
}
