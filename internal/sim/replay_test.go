package sim

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// recording builds a recording of pods-cgroup samples every 10 s (available from avail(t)) and two
// pods measured every 10 s: "victim" using 100Mi, evicted by the recorded kubelet at evictedAt
// (zero: never), and "hog", growing 2Mi/s from 1600Mi.
func recording(span time.Duration, evictedAt time.Duration) Recording {
	r := Recording{Node: "rec", Start: t0, End: t0.Add(span)}
	victim := RecordedPod{Info: PodInfo{Candidate: pod("victim", 0, 0, Ramp{}).Candidate, Since: t0.Add(-time.Minute)}}
	hog := RecordedPod{Info: PodInfo{Candidate: pod("hog", 0, 0, Ramp{}).Candidate, Since: t0.Add(-time.Minute)}}
	hog.Info.Candidate.Critical = true
	if evictedAt > 0 {
		victim.Info.End, victim.Info.Ended = EndEvicted, t0.Add(evictedAt)
		victim.Info.Released = victim.Info.Ended.Add(500 * time.Millisecond)
	}
	hogAt := func(d time.Duration) int64 { return 1600*mi + int64(2*mi*d.Seconds()) }
	for d := time.Duration(0); d <= span; d += 10 * time.Second {
		at := t0.Add(d)
		used := hogAt(d)
		if evictedAt == 0 || d < evictedAt {
			used += 100 * mi
			victim.Samples = append(victim.Samples, PodSample{Stats: stats("victim", 100*mi, at), Seen: at})
		}
		hog.Samples = append(hog.Samples, PodSample{Stats: stats("hog", hogAt(d), at), Seen: at})
		r.PodsMemory = append(r.PodsMemory, MemorySample{At: at, Available: 2048*mi - used, Capacity: 2048 * mi})
	}
	r.Pods = []RecordedPod{victim, hog}
	return r
}

func stats(name string, v int64, at time.Time) signal.PodStats {
	return signal.PodStats{UID: "uid-" + name, Namespace: "default", Name: name, Time: at, MemoryWorkingSet: signal.Uint64(uint64(v)),
		Containers: []signal.ContainerStats{{Name: name, MemoryWorkingSet: signal.Uint64(uint64(v))}}}
}

func TestReplayPutsARecordedReleaseAtItsTime(t *testing.T) {
	// The victim is evicted at 25 s, between the samples of 20 s and 30 s: its 100Mi are freed at
	// 25.5 s, not spread over the gap.
	w := recording(time.Minute, 25*time.Second).World()
	before, after := w.Memory(t0.Add(25*time.Second)), w.Memory(t0.Add(26*time.Second))
	if d := before.PodsWorkingSet - after.PodsWorkingSet; d < 97*mi || d > 100*mi {
		t.Errorf("pods working set 25s→26s fell by %s, want about the victim's 100Mi less the hog's 2Mi", formatMi(d))
	}
}

func TestARunThatDoesNotEvictARecordedVictimKeepsItsMemory(t *testing.T) {
	// The recorded kubelet evicted the victim at 25 s; a run that did not still has it: at 40 s the
	// run's node holds its (extrapolated: flat) 100Mi on top of the recording.
	w := recording(time.Minute, 25*time.Second).World()
	n := newNode(w)
	at := t0.Add(40 * time.Second)
	if d := n.memory(at).PodsWorkingSet - w.Memory(at).PodsWorkingSet; d != 100*mi {
		t.Errorf("run minus recording at 40s = %s, want 100Mi", formatMi(d))
	}
	var active []string
	for _, p := range n.active(at) {
		active = append(active, p.Key())
	}
	if len(active) != 2 {
		t.Errorf("active pods at 40s %v, want the victim too", active)
	}
}

func TestARunThatEvictsAPodTheRecordingKeepsFreesItsMemory(t *testing.T) {
	w := recording(time.Minute, 0).World()
	n := newNode(w)
	n.evict("uid-victim", kill{by: ActorKubelet, at: t0.Add(10 * time.Second), released: t0.Add(11 * time.Second)})
	at := t0.Add(30 * time.Second)
	if d := w.Memory(at).PodsWorkingSet - n.memory(at).PodsWorkingSet; d != 100*mi {
		t.Errorf("recording minus run at 30s = %s, want the victim's 100Mi", formatMi(d))
	}
	if got := n.active(at); len(got) != 1 || got[0].Key() != "default/hog" {
		t.Errorf("active pods %v, want only the hog", got)
	}
}

func TestInferPhaseFindsTheHousekeepingLoop(t *testing.T) {
	// The kubelet syncs every 10.3 s from 3.2 s; the Summary shows those times as whole seconds; two
	// cAdvisor refreshes fall at other seconds.
	r := Recording{Start: t0, End: t0.Add(90 * time.Second)}
	for k := 0; k < 9; k++ {
		at := t0.Add(3200*time.Millisecond + time.Duration(k)*10300*time.Millisecond)
		r.PodsMemory = append(r.PodsMemory, MemorySample{At: at.Truncate(time.Second)})
	}
	r.PodsMemory = append(r.PodsMemory, MemorySample{At: t0.Add(47 * time.Second)}, MemorySample{At: t0.Add(61 * time.Second)})
	ph, ok := r.InferPhase(10 * time.Second)
	if !ok || ph.Agree != 9 || ph.Samples != 11 {
		t.Fatalf("phase %+v ok %v, want the 9 syncs of 11 samples explained", ph, ok)
	}
	// The sync after the window (the 10th, at 95.9 s) must be placed within half a second.
	want := t0.Add(3200*time.Millisecond + 9*10300*time.Millisecond)
	got := t0.Add(ph.FirstSync).Add(9 * ph.Period)
	if d := got.Sub(want); d < -500*time.Millisecond || d > 500*time.Millisecond {
		t.Errorf("phase %+v puts the 10th sync at %s, want %s", ph, got.Sub(t0), want.Sub(t0))
	}
	r.PodsMemory = r.PodsMemory[:2]
	if _, ok := r.InferPhase(10 * time.Second); ok {
		t.Errorf("two samples gave a phase")
	}
}
