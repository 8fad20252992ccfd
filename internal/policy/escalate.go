package policy

import (
	"fmt"
	"time"
)

// The escalation ladder of one planned eviction: which rung next and when. The shell (actuate.Ladder)
// carries out one Move at a time and feeds what happened back (Escalation.Tried, Waited, Avoided), then
// asks Next again, until Next says MoveStop. Every choice is here; the shell only makes the calls.
//
// The rungs: (1) the Eviction API; (2) only for a hard threshold with AllowDelete, when a
// PodDisruptionBudget refuses, wait PDBFallbackWait, read the pod again (it may have ended meanwhile, e.g.
// the kubelet evicted it: then nothing more is asked, since the Eviction API ignores PDBs for a terminal
// pod and would delete the kubelet's Evicted shell), ask the Eviction API once more, then DELETE the pod;
// soft thresholds never fall back, they honour PDBs; (3) only for a hard threshold with AllowCgroupKill,
// when the API is unreachable (no HTTP answer; a 429 or 5xx is an answer and never kills), SIGKILL the
// pod's processes on the node.

// DefaultPDBFallbackWait is how long the ladder waits after a PodDisruptionBudget refused a hard
// eviction before it asks once more and then deletes the pod. Five seconds is one disruption-controller
// resync of a healthy cluster, short next to the kubelet's own 10 s loop, and long enough for a PDB that
// was only "still being processed" to allow the eviction.
const DefaultPDBFallbackWait = 5 * time.Second

// DefaultAvoidanceSettle is how long the ladder waits between publishing a new avoidance and the
// eviction. The API server's admission policy reads the avoidance ConfigMaps through an informer, about
// 10 ms behind a write on an idle test cluster, while the ReplicaSet controller can create the
// replacement within milliseconds of the eviction; 200 ms covers the informer's lag with a wide margin
// and is paid once per newly avoided workload, not per eviction.
const DefaultAvoidanceSettle = 200 * time.Millisecond

// Rung is a step of the escalation ladder.
type Rung string

// Rungs, in escalation order.
const (
	RungNone       Rung = ""             // nothing was attempted (dry-run, in flight)
	RungEviction   Rung = "eviction-api" // policy/v1 Eviction subresource
	RungDelete     Rung = "delete"       // pod DELETE with grace and UID precondition
	RungCgroupKill Rung = "cgroup-kill"  // SIGKILL of the pod's processes on the node
	// RungRecheck is the read of the pod after the PDB fallback wait; an attempt only when it found the
	// pod ended (ResultGone), which ends the ladder.
	RungRecheck Rung = "recheck"
)

// LadderConfig selects the rungs of the escalation ladder.
type LadderConfig struct {
	// AvoidanceSettle is the wait after a new avoidance was published, before the eviction (0: none).
	AvoidanceSettle time.Duration
	// PDBFallbackWait is the wait between a PDB refusal of a hard eviction and the fallback.
	PDBFallbackWait time.Duration
	// AllowDelete enables rung 2 (DELETE under hard pressure when a PDB refuses).
	AllowDelete bool
	// AllowCgroupKill enables rung 3 (SIGKILL on the node under hard pressure when the API is unreachable).
	AllowCgroupKill bool
	// DryRun writes a "would evict" event and never calls evict, delete or kill.
	DryRun bool
}

// MoveKind is what the shell is to do next for one eviction.
type MoveKind string

// Moves.
const (
	MoveDryRun MoveKind = "dry-run" // write a "would evict" event, nothing else
	MoveAvoid  MoveKind = "avoid"   // publish the owner's avoidance of the node (report Avoided)
	MoveWait   MoveKind = "wait"    // wait Move.Wait (report Waited)
	MoveEvict  MoveKind = "evict"   // ask the Eviction API (report Tried)
	MoveDelete MoveKind = "delete"  // DELETE the pod (report Tried)
	MoveKill   MoveKind = "kill"    // SIGKILL the pod's cgroup on the node (report Tried)
	// MoveRecheck: read the pod again after the PDB fallback wait (report Rechecked).
	MoveRecheck MoveKind = "recheck"
	MoveStop    MoveKind = "stop" // the ladder is over: the last attempt is the result
)

// Move is one step of the ladder, with the reason for the trace.
type Move struct {
	Kind MoveKind
	Wait time.Duration
	Why  string
}

// Attempt is one rung tried and its result. Unreachable reports an API call that got no HTTP answer at
// all (a transport error), the only failure that may lead to the cgroup kill.
type Attempt struct {
	Rung        Rung
	Result      Result
	Unreachable bool
}

// Escalation is the ladder state of one pod's eviction. The zero value with Hard set (or not) is a ladder
// not started.
type Escalation struct {
	// Hard reports a hard threshold. A pod terminating or already in flight never gets a ladder: the
	// policy does not plan it (InFlightRule).
	Hard bool
	// Killer reports that the shell can kill on the node (a cgroup killer is configured).
	Killer bool
	// Attempts are the rungs tried, in order.
	Attempts []Attempt
	// avoided: the avoidance step is done; settle: a new avoidance was published and its settle wait is
	// still to come; waits counts the PDB fallback waits done; cut: one was cut short (shutdown);
	// rechecks counts the reads of the pod after a wait; ended is why the pod was found over.
	avoided, settle, cut bool
	waits, rechecks      int
	ended                string
}

// Avoided feeds back the avoidance step: published reports that the avoidance publication changed.
func (e *Escalation) Avoided(published bool) { e.avoided, e.settle = true, published }

// settling reports a new avoidance whose settle wait is still to come.
func (e *Escalation) settling(cfg LadderConfig) bool {
	return e.settle && cfg.AvoidanceSettle > 0 && len(e.Attempts) == 0
}

// Waited feeds back a wait: ok is false when it was cut short (the shell is stopping). A cut settle
// wait still lets the eviction be asked (the API call then fails on its own); a cut PDB fallback wait
// ends the ladder.
func (e *Escalation) Waited(ok bool) {
	if len(e.Attempts) == 0 {
		e.settle = false
		return
	}
	e.waits++
	e.cut = e.cut || !ok
}

// Rechecked feeds back the read of the pod after the PDB fallback wait: ended says why the pod is over
// (e.g. "phase Failed", "not found", "terminating"), "" when it is still there or could not be read (the
// ladder then goes on; the next request's UID precondition still guards a replaced pod). An ended pod
// is the attempt {RungRecheck, ResultGone}, and the ladder stops.
func (e *Escalation) Rechecked(ended string) {
	e.rechecks++
	if ended != "" {
		e.ended = ended
		e.Attempts = append(e.Attempts, Attempt{Rung: RungRecheck, Result: ResultGone})
	}
}

// Tried feeds back one attempt.
func (e *Escalation) Tried(a Attempt) { e.Attempts = append(e.Attempts, a) }

// Last is the last attempt (the zero Attempt when none).
func (e *Escalation) Last() Attempt {
	if len(e.Attempts) == 0 {
		return Attempt{}
	}
	return e.Attempts[len(e.Attempts)-1]
}

// Carried reports whether the ladder ended the pod (the API accepted, or the node killed it): the
// eviction is recorded in the ledger; otherwise the avoidance published for it is taken back.
func (e *Escalation) Carried() bool {
	r := e.Last().Result
	return r == ResultEvicted || r == ResultKilled
}

// Next returns the next move of the ladder.
func (e *Escalation) Next(cfg LadderConfig) Move {
	switch {
	case cfg.DryRun:
		return Move{Kind: MoveDryRun, Why: "dry-run: a would-evict event only"}
	case !e.avoided:
		return Move{Kind: MoveAvoid, Why: "the owner's avoidance is published before the eviction"}
	case e.settling(cfg):
		return Move{Kind: MoveWait, Wait: cfg.AvoidanceSettle, Why: "a new avoidance settles in the admission policy's informer"}
	case e.cut:
		return Move{Kind: MoveStop, Why: "a wait was cut short: nothing more is asked"}
	case e.ended != "":
		return Move{Kind: MoveStop, Why: "the pod ended while the ladder waited (" + e.ended + "): nothing more is asked"}
	case len(e.Attempts) == 0:
		return Move{Kind: MoveEvict, Why: "rung 1: the Eviction API"}
	}
	return e.after(cfg, e.Last())
}

// after is the move that follows attempt a.
func (e *Escalation) after(cfg LadderConfig, a Attempt) Move {
	switch {
	case a.Result == ResultRefused && a.Rung == RungEviction && e.Hard && cfg.AllowDelete && e.waits == 0:
		return Move{Kind: MoveWait, Wait: cfg.PDBFallbackWait,
			Why: fmt.Sprintf("hard threshold refused by a PodDisruptionBudget: wait %s before asking once more", cfg.PDBFallbackWait)}
	case a.Result == ResultRefused && a.Rung == RungEviction && e.Hard && cfg.AllowDelete && e.waits > e.rechecks:
		return Move{Kind: MoveRecheck, Why: "the fallback wait is over: read the pod again, it may have ended meanwhile"}
	case a.Result == ResultRefused && a.Rung == RungEviction && e.Hard && cfg.AllowDelete && e.refusals() == 1:
		return Move{Kind: MoveEvict, Why: "the fallback wait is over: the Eviction API once more"}
	case a.Result == ResultRefused && a.Rung == RungEviction && e.Hard && cfg.AllowDelete:
		return Move{Kind: MoveDelete, Why: "rung 2: still refused by a PodDisruptionBudget under hard pressure, DELETE"}
	case a.Result == ResultUnavailable && a.Unreachable && e.Hard && cfg.AllowCgroupKill && e.Killer:
		return Move{Kind: MoveKill, Why: "rung 3: the API is unreachable under hard pressure, SIGKILL on the node"}
	}
	return Move{Kind: MoveStop, Why: fmt.Sprintf("%s %s: the ladder ends", a.Rung, a.Result)}
}

// refusals counts the Eviction API's PodDisruptionBudget refusals.
func (e *Escalation) refusals() int {
	n := 0
	for _, a := range e.Attempts {
		if a.Rung == RungEviction && a.Result == ResultRefused {
			n++
		}
	}
	return n
}

// IfRefused returns the moves the ladder makes after a PodDisruptionBudget refuses the first eviction
// request and every later one (the PDB never allows): what explain shows for a PDB-protected victim.
func IfRefused(cfg LadderConfig, hard bool) []Move {
	moves, _ := Foresee(cfg, hard, PDBRefuses)
	return moves[1:] // after the first request, which is refused
}

// PDBRefuses is the API of a pod a PodDisruptionBudget protects that never allows a disruption: the
// Eviction API refuses, a DELETE is accepted.
func PDBRefuses(r Rung) Result {
	if r == RungEviction {
		return ResultRefused
	}
	return ResultEvicted
}

// APIAccepts is the API of a pod nothing protects: every request is accepted.
func APIAccepts(Rung) Result { return ResultEvicted }

// Foresee runs the ladder of one eviction against an API whose answers are known (api answers each
// request by its rung; the API always answers, so the cgroup kill never comes) and returns the moves
// after the avoidance step, in order, and the escalation at its end (Last, Carried, Waits). It is the
// ladder actuate.Ladder carries out, by the same Next: what the simulator and explain show of a
// PodDisruptionBudget.
func Foresee(cfg LadderConfig, hard bool, api func(Rung) Result) ([]Move, Escalation) {
	e := Escalation{Hard: hard}
	e.Avoided(false)
	var out []Move
	for len(out) < 8 {
		m := e.Next(cfg)
		out = append(out, m)
		switch m.Kind {
		case MoveWait:
			e.Waited(true)
		case MoveRecheck:
			e.Rechecked("") // the pod is still there
		case MoveEvict:
			e.Tried(Attempt{Rung: RungEviction, Result: api(RungEviction)})
		case MoveDelete:
			e.Tried(Attempt{Rung: RungDelete, Result: api(RungDelete)})
		default:
			return out, e
		}
	}
	return out, e
}

// Waited returns the time the moves spent waiting.
func Waited(moves []Move) time.Duration {
	var d time.Duration
	for _, m := range moves {
		if m.Kind == MoveWait {
			d += m.Wait
		}
	}
	return d
}
