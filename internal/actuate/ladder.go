package actuate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// DefaultPDBFallbackWait and DefaultAvoidanceSettle are the policy's (policy.DefaultPDBFallbackWait,
// policy.DefaultAvoidanceSettle), where the ladder's rules are.
const (
	DefaultPDBFallbackWait = policy.DefaultPDBFallbackWait
	DefaultAvoidanceSettle = policy.DefaultAvoidanceSettle
)

// LadderConfig selects the rungs of the escalation ladder (policy.LadderConfig).
type LadderConfig = policy.LadderConfig

// PodKiller stops a pod's processes on the node (cgroupkill.Killer).
type PodKiller interface {
	KillPod(uid types.UID) (killed int, err error)
}

// Ladder escalates one eviction through the configured rungs. It is safe for concurrent use when its
// parts are.
type Ladder struct {
	Evictor *Evictor
	// Killer is rung 3; nil disables it whatever the config says.
	Killer PodKiller
	// Events records pod events; nil records nothing.
	Events *Events
	// Ledger stores the evictions carried out and the avoidances (whether one is in flight is the
	// policy's rule, policy.InFlightRule); nil stores nothing.
	Ledger *loopbreaker.PersistentLedger
	Clock  clock.Clock
	Config LadderConfig
}

// Evict carries out the escalation ladder for req: it asks the policy for the next move
// (policy.Escalation.Next), makes that one call or wait, feeds its outcome back and asks again, until the
// policy stops. The returned error is only about bookkeeping (persisting the ledger); what happened to the
// pod is in the Result.
func (l *Ladder) Evict(ctx context.Context, req Request) (Result, error) {
	return l.EvictThen(ctx, req, nil)
}

// EvictThen is Evict, except when later is set and the ladder has to wait for the PodDisruptionBudget
// fallback (a hard eviction refused by a PDB, eviction.allowDelete): then it returns at once with the
// result so far (the refusal, Continuing set) and carries out the rest (the wait, the read of the pod,
// the second request, the DELETE) in a goroutine, which calls later once with the final result. The
// caller is not held for the wait: under hard pressure the plan's other victims, and the next plans,
// must not wait five seconds behind one PDB-protected pod (the soak run's kernel OOM kills of
// 2026-12-05 came during such waits).
func (l *Ladder) EvictThen(ctx context.Context, req Request, later func(Result, error)) (Result, error) {
	r := &ladderState{req: req, now: l.Clock.Now(), esc: policy.Escalation{Hard: req.Hard, Killer: l.Killer != nil}}
	return l.run(ctx, r, later)
}

// ladderState is one eviction's ladder between its moves.
type ladderState struct {
	req      Request
	now      time.Time
	esc      policy.Escalation
	res      Result
	prev     policy.Avoidance
	avoidErr error
}

// run makes the ladder's moves from r on until the policy stops, or, with later set, until the
// PDB fallback wait, whose rest goes to a goroutine (EvictThen).
func (l *Ladder) run(ctx context.Context, r *ladderState, later func(Result, error)) (Result, error) {
	req := r.req
	for {
		m := r.esc.Next(l.Config)
		if later != nil && m.Kind == policy.MoveWait && len(r.esc.Attempts) > 0 {
			partial := r.res
			partial.Attempts, partial.Why = slices.Clone(r.res.Attempts), slices.Clone(r.res.Why)
			partial.Continuing = true
			go func() { later(l.run(ctx, r, nil)) }()
			return partial, nil
		}
		r.res.Why = append(r.res.Why, m.Why)
		switch m.Kind {
		case policy.MoveDryRun:
			if l.Events != nil {
				l.Events.WouldEvict(req)
			}
			r.res.Outcome = OutcomeDryRun
			return r.res, nil
		case policy.MoveAvoid:
			var published bool
			r.prev, published, r.avoidErr = l.avoid(ctx, req, r.now)
			r.esc.Avoided(published)
		case policy.MoveWait:
			r.esc.Waited(l.wait(ctx, m.Wait))
		case policy.MoveRecheck:
			l.recheck(ctx, req, &r.esc, &r.res)
		case policy.MoveEvict:
			o, err := l.Evictor.Evict(ctx, req.Pod, req.GracePeriodSeconds)
			l.tried(&r.esc, &r.res, Attempt{Rung: RungEviction, Outcome: o, Err: err})
		case policy.MoveDelete:
			o, err := l.Evictor.Delete(ctx, req.Pod, req.GracePeriodSeconds)
			l.tried(&r.esc, &r.res, Attempt{Rung: RungDelete, Outcome: o, Err: err})
		case policy.MoveKill:
			l.tried(&r.esc, &r.res, l.kill(req, &r.res))
		default: // policy.MoveStop
			return l.finish(ctx, req, r.prev, &r.esc, r.res, r.avoidErr)
		}
	}
}

// recheck reads the pod again and feeds back whether it ended; an ended pod is the result's last
// attempt (gone). A failed read ends nothing: the ladder goes on and the next request's UID
// precondition still guards a replaced pod.
func (l *Ladder) recheck(ctx context.Context, req Request, esc *policy.Escalation, res *Result) {
	ended, err := l.Evictor.Ended(ctx, req.Pod)
	esc.Rechecked(ended)
	switch {
	case ended != "":
		res.add(Attempt{Rung: RungRecheck, Outcome: OutcomeGone,
			Err: fmt.Errorf("pod %s/%s uid %s ended while the ladder waited: %s", req.Pod.Namespace, req.Pod.Name, req.Pod.UID, ended)})
	case err != nil:
		res.Why = append(res.Why, err.Error())
	}
}

// tried adds an attempt to the result and feeds it back to the escalation.
func (l *Ladder) tried(esc *policy.Escalation, res *Result, a Attempt) {
	res.add(a)
	esc.Tried(policy.Attempt{Rung: a.Rung, Result: policy.Result(a.Outcome), Unreachable: IsUnreachable(a.Err)})
}

// finish writes the events and the ledger once the ladder stopped.
func (l *Ladder) finish(ctx context.Context, req Request, prev policy.Avoidance, esc *policy.Escalation, res Result, avoidErr error) (Result, error) {
	l.record(req, res)
	// The ledger must hold an eviction that was made even when the agent is stopping (ctx cancelled
	// after the request was sent): a restarted agent reads it to count the pod in flight.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	return res, errors.Join(avoidErr, l.remember(bctx, req, prev, esc.Carried(), &res))
}

// bookkeepingTimeout bounds the ledger write after an eviction once the agent's context is cancelled.
const bookkeepingTimeout = 5 * time.Second

// avoid publishes the owner's avoidance of the node before the eviction: the owner's controller creates
// the replacement as soon as the pod is terminating, and the admission policy must already see it.
func (l *Ladder) avoid(ctx context.Context, req Request, now time.Time) (policy.Avoidance, bool, error) {
	if l.Ledger == nil {
		return policy.Avoidance{}, false, nil
	}
	return l.Ledger.Avoid(ctx, req.Owner, now)
}

func (l *Ladder) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-l.Clock.After(d):
		return true
	}
}

func (l *Ladder) kill(req Request, res *Result) Attempt {
	n, err := l.Killer.KillPod(req.Pod.UID)
	o := OutcomeKilled
	if err != nil {
		o = OutcomeFailed
		err = fmt.Errorf("kill pod %s/%s uid %s on the node: %w", req.Pod.Namespace, req.Pod.Name, req.Pod.UID, err)
	}
	res.Killed = n
	return Attempt{Rung: RungCgroupKill, Outcome: o, Err: err}
}

func (l *Ladder) record(req Request, res Result) {
	if l.Events == nil {
		return
	}
	switch res.Outcome {
	case OutcomeEvicted, OutcomeKilled:
		l.Events.Evicted(req, res)
	case OutcomeBlockedByPDB, OutcomeUnavailable, OutcomeFailed:
		l.Events.EvictionFailed(req, res)
	}
}

// remember records a carried-out eviction in the ledger (reporting a loop on the owner), or takes back
// the avoidance published for an eviction that did not happen.
func (l *Ladder) remember(ctx context.Context, req Request, prev policy.Avoidance, carried bool, res *Result) error {
	if l.Ledger == nil {
		return nil
	}
	now := l.Clock.Now()
	if !carried {
		return l.Ledger.Restore(ctx, req.Owner, prev, now)
	}
	e := policy.HistoryEntry{
		UID: string(req.Pod.UID), Namespace: req.Pod.Namespace, Name: req.Pod.Name,
		Owner: req.Owner, Signal: req.Signal, Rung: string(res.Rung), At: now, Created: req.Created,
	}
	loop, ok, err := l.Ledger.Record(ctx, e)
	if ok {
		res.EvictionLoop = &loop
		if l.Events != nil {
			l.Events.EvictionLoop(loop)
		}
	}
	return err
}
