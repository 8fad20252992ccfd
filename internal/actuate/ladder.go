package actuate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
)

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

// LadderConfig selects the rungs of the escalation ladder.
type LadderConfig struct {
	// AvoidanceSettle is the wait after a new avoidance was published, before the eviction (0: none).
	AvoidanceSettle time.Duration
	// PDBFallbackWait is the wait between a PDB refusal of a hard eviction and the fallback.
	PDBFallbackWait time.Duration
	// AllowDelete enables rung 2 (DELETE under hard pressure when a PDB refuses).
	AllowDelete bool
	// AllowCgroupKill enables rung 3 (SIGKILL on the node under hard pressure when the API is unreachable:
	// a transport error, IsUnreachable; a 429 or 5xx answer never triggers it, nor a timeout during
	// client-go's Retry-After retries of one: AnsweredError).
	AllowCgroupKill bool
	// DryRun writes a "would evict" event and never calls evict, delete or kill.
	DryRun bool
}

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
	// Ledger remembers evictions in flight; nil remembers nothing.
	Ledger *loopbreaker.PersistentLedger
	Clock  clock.Clock
	Config LadderConfig
}

// Evict runs the ladder for req. The returned error is only about bookkeeping (persisting the ledger);
// what happened to the pod is in the Result.
func (l *Ladder) Evict(ctx context.Context, req Request) (Result, error) {
	now := l.Clock.Now()
	if req.Terminating || (l.Ledger != nil && l.Ledger.InFlight(req.Pod.UID, now)) {
		return Result{Outcome: OutcomeInFlight}, nil
	}
	if l.Config.DryRun {
		if l.Events != nil {
			l.Events.WouldEvict(req)
		}
		return Result{Outcome: OutcomeDryRun}, nil
	}
	prev, avoidErr := l.avoid(ctx, req, now)
	var res Result
	l.evict(ctx, req, &res)
	if res.Outcome == OutcomeBlockedByPDB && req.Hard && l.Config.AllowDelete {
		l.pdbFallback(ctx, req, &res)
	}
	if res.Outcome == OutcomeUnavailable && IsUnreachable(res.Err()) && req.Hard && l.Config.AllowCgroupKill && l.Killer != nil {
		l.kill(req, &res)
	}
	l.record(req, res)
	// The ledger must hold an eviction that was made even when the agent is stopping (ctx cancelled
	// after the request was sent): a restarted agent reads it to count the pod in flight.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	return res, errors.Join(avoidErr, l.remember(bctx, req, prev, &res))
}

// bookkeepingTimeout bounds the ledger write after an eviction once the agent's context is cancelled.
const bookkeepingTimeout = 5 * time.Second

// avoid publishes the owner's avoidance of the node before the eviction: the owner's controller creates
// the replacement as soon as the pod is terminating, and the admission policy must already see it.
func (l *Ladder) avoid(ctx context.Context, req Request, now time.Time) (loopbreaker.Avoidance, error) {
	if l.Ledger == nil {
		return loopbreaker.Avoidance{}, nil
	}
	prev, published, err := l.Ledger.Avoid(ctx, req.Owner, now)
	if published && l.Config.AvoidanceSettle > 0 {
		l.wait(ctx, l.Config.AvoidanceSettle)
	}
	return prev, err
}

func (l *Ladder) evict(ctx context.Context, req Request, res *Result) {
	o, err := l.Evictor.Evict(ctx, req.Pod, req.GracePeriodSeconds)
	res.add(Attempt{Rung: RungEviction, Outcome: o, Err: err})
}

// pdbFallback waits, asks the Eviction API once more, and deletes the pod if the PDB still refuses.
func (l *Ladder) pdbFallback(ctx context.Context, req Request, res *Result) {
	if !l.wait(ctx, l.Config.PDBFallbackWait) {
		return
	}
	l.evict(ctx, req, res)
	if res.Outcome != OutcomeBlockedByPDB {
		return
	}
	o, err := l.Evictor.Delete(ctx, req.Pod, req.GracePeriodSeconds)
	res.add(Attempt{Rung: RungDelete, Outcome: o, Err: err})
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

func (l *Ladder) kill(req Request, res *Result) {
	n, err := l.Killer.KillPod(req.Pod.UID)
	o := OutcomeKilled
	if err != nil {
		o = OutcomeFailed
		err = fmt.Errorf("kill pod %s/%s uid %s on the node: %w", req.Pod.Namespace, req.Pod.Name, req.Pod.UID, err)
	}
	res.Killed = n
	res.add(Attempt{Rung: RungCgroupKill, Outcome: o, Err: err})
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
func (l *Ladder) remember(ctx context.Context, req Request, prev loopbreaker.Avoidance, res *Result) error {
	if l.Ledger == nil {
		return nil
	}
	now := l.Clock.Now()
	if res.Outcome != OutcomeEvicted && res.Outcome != OutcomeKilled {
		return l.Ledger.Restore(ctx, req.Owner, prev, now)
	}
	e := loopbreaker.Entry{
		UID: req.Pod.UID, Namespace: req.Pod.Namespace, Name: req.Pod.Name,
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
