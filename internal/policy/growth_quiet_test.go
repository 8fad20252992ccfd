package policy

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// The reader's figures are the real node's looping reader around one of its reclaims (sampled every 25 ms
// on 2026-12-07, docs/benchmarks.md): working set 1751Mi of which 1749Mi active file pages before it, and
// a sample 0.3 s after the reclaim ended whose two reads disagree by 88Mi.
func TestAReclaimedPodsSamplesRightAfterItsReclaimAreNotItsGrowth(t *testing.T) {
	const mi = 1 << 20
	cfg := ReclaimConfig{MinRateSpan: time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(uid string, ws, active uint64, at time.Time) rank.Candidate {
		return rank.Candidate{UID: uid, Stats: &signal.PodStats{Time: at, MemoryWorkingSet: signal.Uint64(ws),
			Memory: &signal.MemoryStat{ActiveFile: signal.Uint64(active)}}}
	}
	ended := t0.Add(2 * time.Second) // the reclaim of the reader, from 1.8 s to 2 s
	for _, tc := range []struct {
		name    string
		outcome ReclaimOutcome
		// hog starts right after the reclaim and grows 256Mi/s.
		hog        bool
		wantReader bool // the reader's skewed sample counts as growth
		wantHog    bool
	}{
		{name: "without the reclaim's outcome the skewed sample reads as growth (the failure it fixes)",
			outcome: ReclaimOutcome{UID: "other", At: ended}, wantReader: true},
		{name: "the reclaimed pod's sample within the rate span after its reclaim is not growth",
			outcome: ReclaimOutcome{UID: "reader", At: ended}},
		{name: "a reclaim of the pods cgroup quiets every pod's samples",
			outcome: ReclaimOutcome{At: ended}},
		{name: "a hog started right after the reader's reclaim still grows",
			outcome: ReclaimOutcome{UID: "reader", At: ended}, hog: true, wantHog: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := State{}
			for ms := 0; ms <= 1800; ms += 25 { // the loop before the reclaim: steady
				at := t0.Add(time.Duration(ms) * time.Millisecond)
				st.recordPodGrowth(pod("reader", 1751*mi, 1749*mi, at), at, cfg)
				st.podsAt = at
			}
			st.quietReclaimed([]ReclaimOutcome{tc.outcome}, cfg.MinRateSpan)
			for ms := 2025; ms <= 2900; ms += 25 {
				at := t0.Add(time.Duration(ms) * time.Millisecond)
				ws, active := uint64(1751*mi), uint64(1749*mi)
				if ms == 2300 {
					ws, active = 1536*mi, 1448*mi // 88Mi of usage other than file pages, by the two reads
				}
				st.recordPodGrowth(pod("reader", ws, active, at), at, cfg)
				if tc.hog {
					st.recordPodGrowth(pod("hog", uint64(ms-2025)*256*mi/1000, 0, at), at, cfg)
				}
				st.podsAt = at
				if ms == 2300 {
					if got := st.podGrowth("reader", cfg) > 0; got != tc.wantReader {
						t.Errorf("the reader's skewed sample is growth: %v (%.0f/s), want %v", got, st.podGrowth("reader", cfg), tc.wantReader)
					}
				}
			}
			if got := st.podGrowth("hog", cfg) > 100*mi; got != tc.wantHog {
				t.Errorf("the hog grows over 100Mi/s: %v (%.0f/s), want %v", got, st.podGrowth("hog", cfg), tc.wantHog)
			}
			// After the quiet window the reader's trend starts again from its own samples: steady, no growth.
			at := t0.Add(3100 * time.Millisecond)
			st.recordPodGrowth(pod("reader", 1751*mi, 1749*mi, at), at, cfg)
			if tc.wantReader {
				return
			}
			if got := st.podGrowth("reader", cfg); got != 0 {
				t.Errorf("the reader after the quiet window grows %.0f/s, want 0", got)
			}
			if _, ok := st.nfQuiet["reader"]; ok {
				t.Errorf("the reader's quiet window is still kept after a sample past it")
			}
		})
	}
}
