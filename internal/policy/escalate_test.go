package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// walkLadder runs an escalation to its end, answering each API call from answers (one per call, in order;
// ResultEvicted once they run out), each wait with waitOK and each read of the pod with ended, and
// returns the moves, each as "kind" or "wait <d>".
func walkLadder(cfg LadderConfig, e Escalation, answers []Attempt, waitOK bool, ended string) []string {
	var out []string
	for len(out) < 20 {
		m := e.Next(cfg)
		s := string(m.Kind)
		if m.Kind == MoveWait {
			s += " " + m.Wait.String()
		}
		out = append(out, s)
		if m.Why == "" {
			out = append(out, "(no reason)")
		}
		switch m.Kind {
		case MoveAvoid:
			e.Avoided(true)
		case MoveWait:
			e.Waited(waitOK)
		case MoveRecheck:
			e.Rechecked(ended)
		case MoveEvict, MoveDelete, MoveKill:
			rung := map[MoveKind]Rung{MoveEvict: RungEviction, MoveDelete: RungDelete, MoveKill: RungCgroupKill}[m.Kind]
			a := Attempt{Rung: rung, Result: ResultEvicted}
			if m.Kind == MoveKill {
				a.Result = ResultKilled
			}
			if len(answers) > 0 && m.Kind != MoveKill {
				a, answers = answers[0], answers[1:]
				a.Rung = rung
			}
			e.Tried(a)
		default:
			return out
		}
	}
	return out
}

func TestEscalation(t *testing.T) {
	full := LadderConfig{PDBFallbackWait: DefaultPDBFallbackWait, AllowDelete: true, AllowCgroupKill: true}
	refused := Attempt{Result: ResultRefused}
	unreachable := Attempt{Result: ResultUnavailable, Unreachable: true}
	answered503 := Attempt{Result: ResultUnavailable}
	cases := []struct {
		name    string
		cfg     LadderConfig
		esc     Escalation
		answers []Attempt
		waitOK  bool
		ended   string
		want    []string
		carried bool
	}{
		{name: "an accepted eviction uses the eviction API only", cfg: full, esc: Escalation{Hard: true, Killer: true},
			want: []string{"avoid", "evict", "stop"}, carried: true},
		{name: "a new avoidance settles before the eviction", cfg: LadderConfig{AvoidanceSettle: DefaultAvoidanceSettle},
			esc: Escalation{}, want: []string{"avoid", "wait 200ms", "evict", "stop"}, carried: true},
		{name: "hard eviction refused by a PDB is retried once after the fallback wait and then deleted", cfg: full,
			esc: Escalation{Hard: true, Killer: true}, answers: []Attempt{refused, refused}, waitOK: true,
			want: []string{"avoid", "evict", "wait 5s", "recheck", "evict", "delete", "stop"}, carried: true},
		{name: "hard eviction refused by a PDB whose pod ended during the fallback wait asks nothing more", cfg: full,
			esc: Escalation{Hard: true, Killer: true}, answers: []Attempt{refused, refused}, waitOK: true, ended: "phase Failed",
			want: []string{"avoid", "evict", "wait 5s", "recheck", "stop"}},
		{name: "hard eviction a PDB allows after the fallback wait is not deleted", cfg: full,
			esc: Escalation{Hard: true}, answers: []Attempt{refused, {Result: ResultEvicted}}, waitOK: true,
			want: []string{"avoid", "evict", "wait 5s", "recheck", "evict", "stop"}, carried: true},
		{name: "soft eviction refused by a PDB is never deleted", cfg: full, esc: Escalation{Killer: true},
			answers: []Attempt{refused}, want: []string{"avoid", "evict", "stop"}},
		{name: "hard eviction refused by a PDB without allowDelete stays refused", cfg: LadderConfig{PDBFallbackWait: time.Second},
			esc: Escalation{Hard: true}, answers: []Attempt{refused}, want: []string{"avoid", "evict", "stop"}},
		{name: "a fallback wait cut short (shutdown) deletes nothing", cfg: full, esc: Escalation{Hard: true},
			answers: []Attempt{refused, refused}, waitOK: false, want: []string{"avoid", "evict", "wait 5s", "stop"}},
		{name: "unreachable API under hard pressure kills the pod's cgroup when the kill rung is enabled", cfg: full,
			esc: Escalation{Hard: true, Killer: true}, answers: []Attempt{unreachable},
			want: []string{"avoid", "evict", "kill", "stop"}, carried: true},
		{name: "unreachable API without a killer leaves the outage as the result", cfg: full,
			esc: Escalation{Hard: true}, answers: []Attempt{unreachable}, want: []string{"avoid", "evict", "stop"}},
		{name: "unreachable API with the kill rung disabled is not killed", cfg: LadderConfig{AllowDelete: true},
			esc: Escalation{Hard: true, Killer: true}, answers: []Attempt{unreachable}, want: []string{"avoid", "evict", "stop"}},
		{name: "unreachable API under soft pressure is not killed", cfg: full, esc: Escalation{Killer: true},
			answers: []Attempt{unreachable}, want: []string{"avoid", "evict", "stop"}},
		{name: "an answered 503 under hard pressure is retried through the API, never killed", cfg: full,
			esc: Escalation{Hard: true, Killer: true}, answers: []Attempt{answered503}, want: []string{"avoid", "evict", "stop"}},
		{name: "a DELETE that finds the API unreachable under hard pressure kills", cfg: full,
			esc: Escalation{Hard: true, Killer: true}, answers: []Attempt{refused, refused, unreachable}, waitOK: true,
			want: []string{"avoid", "evict", "wait 5s", "recheck", "evict", "delete", "kill", "stop"}, carried: true},
		{name: "a pod already gone is not retried", cfg: full, esc: Escalation{Hard: true, Killer: true},
			answers: []Attempt{{Result: ResultGone}}, want: []string{"avoid", "evict", "stop"}},
		{name: "dry-run asks nothing", cfg: LadderConfig{DryRun: true, AllowDelete: true}, esc: Escalation{Hard: true},
			want: []string{"dry-run"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := walkLadder(tc.cfg, tc.esc, tc.answers, tc.waitOK, tc.ended)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("moves (-got +want):\n%s", diff)
			}
		})
	}
}

func TestEscalationCarriedOnlyWhenThePodWasEnded(t *testing.T) {
	for _, tc := range []struct {
		result Result
		want   bool
	}{{ResultEvicted, true}, {ResultKilled, true}, {ResultGone, false}, {ResultRefused, false}, {ResultUnavailable, false}} {
		e := Escalation{}
		e.Tried(Attempt{Rung: RungEviction, Result: tc.result})
		if got := e.Carried(); got != tc.want {
			t.Errorf("Carried after %s = %t, want %t", tc.result, got, tc.want)
		}
	}
}

func TestIfRefusedForeseesTheLadderAfterAPDBRefusal(t *testing.T) {
	full := LadderConfig{PDBFallbackWait: DefaultPDBFallbackWait, AllowDelete: true}
	kinds := func(ms []Move) string {
		var s []string
		for _, m := range ms {
			s = append(s, string(m.Kind))
		}
		return strings.Join(s, " ")
	}
	if got := kinds(IfRefused(full, true)); got != "wait recheck evict delete stop" {
		t.Errorf("hard, allowDelete: %q, want %q", got, "wait recheck evict delete stop")
	}
	if got := kinds(IfRefused(full, false)); got != "stop" {
		t.Errorf("soft: %q, want %q", got, "stop")
	}
	if got := kinds(IfRefused(LadderConfig{}, true)); got != "stop" {
		t.Errorf("hard, no allowDelete: %q, want %q", got, "stop")
	}
}
