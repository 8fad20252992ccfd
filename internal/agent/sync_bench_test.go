package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// BenchmarkWakeUpSync is the agent's work from a wake-up to its decision (the part of crossing →
// request that is the agent's own): one sync with TriggerNotify, which reads every pod's stats fresh,
// then the node (the machine's /proc), and runs the policy, on a fixture cgroup tree of 50 Burstable pods beside a BestEffort
// hog. "calm": no threshold met. "pressure": the hog below the agent's threshold and already in flight,
// so every sync ranks the pods and finds nothing more to ask (no request is timed).
func BenchmarkWakeUpSync(b *testing.B) {
	for _, tc := range []struct {
		name string
		hog  int64
	}{{"calm", 200 * mi}, {"pressure", 700 * mi}} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHarness(b, nil)
			// The machine's own procfs (PIDs, PSI, meminfo), so the benchmark runs anywhere its binary
			// is copied (test/vm runs it in the cgroup v2 guest); the pods are the fixture tree's.
			h.agent.Source.(*source.Node).Proc = procfs.NewReader("/proc")
			var pods []*corev1.Pod
			for i := range 50 {
				uid := fmt.Sprintf("u-%02d", i)
				pods = append(pods, pod(fmt.Sprintf("p-%02d", i), uid, "burstable", "20Mi"))
				h.tree.setPod(uid, "burstable", 25*mi)
			}
			h.pods.set(append(pods, pod("hog", "u-hog", "besteffort", ""))...)
			h.tree.setPod("u-hog", "besteffort", tc.hog) // 1250Mi + hog of the 2048Mi pods cgroup
			ctx := context.Background()
			h.clock.Step(time.Second)
			h.agent.sync(ctx, TriggerNotify) // the first sync: in pressure, it asks for the hog
			b.ResetTimer()
			for range b.N {
				h.clock.Step(25 * time.Millisecond)
				h.agent.sync(ctx, TriggerNotify)
			}
			b.StopTimer()
			if got := len(h.ladder.names()); (tc.hog > 500*mi) != (got == 1) {
				b.Fatalf("%s: %d eviction requests, want %d", tc.name, got, map[bool]int{true: 1}[tc.hog > 500*mi])
			}
		})
	}
}
