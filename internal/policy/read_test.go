package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/rank"
)

func TestNewInputBuildsTheStepsInputFromWhatWasRead(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pod := func(uid string, terminal bool, deletion time.Time) Pod {
		return Pod{Candidate: rank.Candidate{UID: uid, Namespace: "ns", Name: uid}, Terminal: terminal, DeletionTimestamp: deletion}
	}
	memOnly := kubelet(t, map[string]string{"memory.available": "100Mi"})
	withDisk := kubelet(t, map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"})
	for _, tc := range []struct {
		name         string
		read         Read
		wantPods     []string
		wantInFlight []InFlight
		// wantUnknown are substrings of the unknown lines, one per line, in order.
		wantUnknown []string
	}{{
		name:     "active and terminating pods are kept in the order read",
		read:     Read{Kubelet: memOnly, Ledger: &Ledger{}, Pods: []Pod{pod("b", false, time.Time{}), pod("a", false, t0)}},
		wantPods: []string{"b", "a"},
	}, {
		name:     "a terminal pod still being deleted is kept: its volumes are credited until it is gone",
		read:     Read{Kubelet: memOnly, Ledger: &Ledger{}, Pods: []Pod{pod("done", true, t0), pod("a", false, time.Time{})}},
		wantPods: []string{"done", "a"},
	}, {
		name:     "a terminal pod without a deletion timestamp is dropped",
		read:     Read{Kubelet: memOnly, Ledger: &Ledger{}, Pods: []Pod{pod("done", true, time.Time{}), pod("a", false, time.Time{})}},
		wantPods: []string{"a"},
	}, {
		name: "the ledger's evictions not settled are in flight, the settled ones are not",
		read: Read{Kubelet: memOnly, Ledger: &Ledger{Evictions: []LedgerEviction{
			{UID: "x", At: t0, Rung: "eviction-api"}, {UID: "y", At: t0, Rung: "delete", Settled: true}, {UID: "z", At: t0.Add(time.Second), Rung: "delete"}}}},
		wantInFlight: []InFlight{{UID: "x", At: t0, Rung: "eviction-api"}, {UID: "z", At: t0.Add(time.Second), Rung: "delete"}},
	}, {
		name:        "an unknown ledger counts nothing in flight and says so: absent is not empty",
		read:        Read{Kubelet: memOnly},
		wantUnknown: []string{"eviction ledger: unknown"},
	}, {
		name:        "an unknown reclaim estimate is said when a disk threshold could use it",
		read:        Read{Kubelet: withDisk, Ledger: &Ledger{}},
		wantUnknown: []string{"image and container GC could free: unknown"},
	}, {
		name: "a known reclaim estimate says nothing",
		read: Read{Kubelet: withDisk, Ledger: &Ledger{}, Reclaimable: &Reclaimable{UnusedImages: 1}},
	}, {
		name:        "both unknown: the ledger first, then the reclaim estimate",
		read:        Read{Kubelet: withDisk},
		wantUnknown: []string{"eviction ledger", "image and container GC"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in, unknown := NewInput(tc.read)
			var pods []string
			for _, p := range in.Pods {
				pods = append(pods, p.Candidate.UID)
			}
			if d := cmp.Diff(tc.wantPods, pods); d != "" {
				t.Errorf("pods (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantInFlight, in.InFlight); d != "" {
				t.Errorf("in flight (-want +got):\n%s", d)
			}
			if len(unknown) != len(tc.wantUnknown) {
				t.Fatalf("unknown = %q, want %d lines containing %q", unknown, len(tc.wantUnknown), tc.wantUnknown)
			}
			for i, w := range tc.wantUnknown {
				if !strings.Contains(unknown[i], w) {
					t.Errorf("unknown[%d] = %q, want it to contain %q", i, unknown[i], w)
				}
			}
		})
	}
}

// The rest of what was read reaches the Input as it is.
func TestNewInputPassesTheRestThrough(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Read{Now: t0, Config: DefaultConfig(), Kubelet: kubelet(t, map[string]string{"memory.available": "100Mi"}),
		Reclaimable: &Reclaimable{UnusedImages: 7, Source: "test"}, ReclaimUnavailable: "no memory.reclaim",
		Outcomes: []Outcome{{UID: "a", Action: ActionEvict, Result: ResultRefused, At: t0}},
		Reclaims: []ReclaimOutcome{{UID: "b", Freed: 3, At: t0}}, Persisting: true, Ledger: &Ledger{}}
	in, _ := NewInput(r)
	want := Input{Now: r.Now, Config: r.Config, Kubelet: r.Kubelet, Reclaimable: r.Reclaimable, ReclaimUnavailable: r.ReclaimUnavailable,
		Outcomes: r.Outcomes, Reclaims: r.Reclaims, Persisting: true}
	if d := cmp.Diff(want, in, cmp.AllowUnexported(Config{})); d != "" {
		t.Errorf("input (-want +got):\n%s", d)
	}
}
