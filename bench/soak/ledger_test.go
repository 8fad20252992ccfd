package soak

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// TestReadLedgerSampleReadsWhatTheAgentWrites writes a ledger with loopbreaker.WriteLedger (the agent's
// own encoder) and reads it back as the sampler does.
func TestReadLedgerSampleReadsWhatTheAgentWrites(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)
	owner := policy.Workload{Kind: "ReplicaSet", Name: "web", UID: "rs1"}
	h := policy.HistoryOf(policy.LoopConfig{}, []policy.HistoryEntry{
		{UID: "b", Namespace: "ns", Name: "pb", At: t0.Add(time.Minute)},
		{UID: "a", Namespace: "ns", Name: "pa", At: t0, Owner: owner},
	}, []policy.Avoidance{{Owner: owner, Until: t0.Add(2 * time.Minute)}})
	var b bytes.Buffer
	if err := loopbreaker.WriteLedger(&b, h); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(3 * time.Minute)
	got := ReadLedgerSample(at, b.String())
	want := LedgerSample{At: at, Bytes: b.Len(), Entries: 2, Avoidances: 1, Oldest: t0, LastEnded: t0.Add(2 * time.Minute)}
	if got != want {
		t.Errorf("ReadLedgerSample = %+v\nwant %+v", got, want)
	}
	if got := ReadLedgerSample(at, ""); got != (LedgerSample{At: at}) {
		t.Errorf("an absent ledger reads as %+v, want an empty sample", got)
	}
	if got := ReadLedgerSample(at, corruptLedger); !got.Corrupted || got.Unreadable == "" {
		t.Errorf("the fault's text reads as %+v, want corrupted and unreadable", got)
	}
	if got := ReadLedgerSample(at, `{"version":2,"entries":[{"uid":"x"}]}`); got.Corrupted || !strings.Contains(got.Unreadable, "required") {
		t.Errorf("an entry without a pod reads as %+v, want unreadable (not the fault's text)", got)
	}
}

func TestLedgerBounded(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)
	maxAge := LedgerMaxAge(time.Minute)
	sample := func(at time.Duration, mut func(*LedgerSample)) LedgerSample {
		s := LedgerSample{At: t0.Add(at), Entries: 1, Oldest: t0}
		if mut != nil {
			mut(&s)
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		samples []LedgerSample
		want    int
	}{
		{"entries within the loop window are allowed", []LedgerSample{sample(0, nil), sample(5*time.Minute, nil), sample(10*time.Minute, nil)}, 0},
		{"an entry kept past the window plus slack is a violation, reported once",
			[]LedgerSample{sample(10*time.Minute, nil), sample(maxAge+time.Second, nil), sample(maxAge+time.Minute, nil)}, 1},
		{"a ledger that grows but forgets is allowed (size is not judged)", []LedgerSample{
			sample(0, func(s *LedgerSample) { s.Entries, s.Bytes = 5, 1000 }),
			sample(20*time.Minute, func(s *LedgerSample) { s.Entries, s.Bytes, s.Oldest = 50, 14000, t0.Add(15*time.Minute) })}, 0},
		{"an avoidance ended within the slack is allowed", []LedgerSample{sample(time.Minute, func(s *LedgerSample) { s.LastEnded = t0.Add(30 * time.Second) })}, 0},
		{"an avoidance stored a minute and more after it ended is a violation",
			[]LedgerSample{sample(3*time.Minute, func(s *LedgerSample) { s.LastEnded = t0.Add(time.Minute) })}, 1},
		{"the corrupted text the fault wrote is allowed", []LedgerSample{sample(0, func(s *LedgerSample) { s.Unreadable, s.Corrupted, s.Entries, s.Oldest = "decode", true, 0, time.Time{} })}, 0},
		{"any other unreadable ledger is a violation", []LedgerSample{sample(0, func(s *LedgerSample) { s.Unreadable = "decode ledger: unexpected EOF" })}, 1},
		{"an empty ledger is allowed", []LedgerSample{{At: t0}}, 0},
		{"each kind is reported", []LedgerSample{sample(maxAge+time.Minute, func(s *LedgerSample) {
			s.LastEnded, s.Unreadable = t0, "x"
		})}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, LedgerBounded(tc.samples, maxAge, time.Minute), tc.want, InvLedgerBounded)
		})
	}
}
