package agent

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// taintEvents records the pressure taint's events (actuate.Events).
type taintEvents interface {
	TaintChanged(added bool, value string)
}

// taintWriter changes the node's taint (loopbreaker.Tainter).
type taintWriter interface {
	Ensure(ctx context.Context, value string) (bool, error)
	Remove(ctx context.Context) (bool, error)
}

// Breaker makes the node's NoSchedule taint (loopbreaker.TaintKey) match the state the policy wants (on while
// a threshold of ours is met and for a hysteresis after, policy.Plan.Taint); eviction loops are broken per
// workload by the ledger's avoidances (actuate.Ladder), not by the taint. It also settles the ledger's
// entries of pods that are gone and prunes (and republishes) the avoidances.
type Breaker struct {
	Ledger  *loopbreaker.PersistentLedger
	Tainter taintWriter
	Events  taintEvents

	tainted *bool  // nil until the first successful change or check
	shown   string // the value the taint has on the node
}

// Sync implements loopBreaker.
func (b *Breaker) Sync(ctx context.Context, now time.Time, want policy.Taint, pods []*corev1.Pod) error {
	return errors.Join(b.settle(ctx, now, pods), b.taint(ctx, want), b.Ledger.Prune(ctx, now))
}

// settle marks the ledger's evictions of pods no longer running as finished (policy.Finished).
func (b *Breaker) settle(ctx context.Context, now time.Time, pods []*corev1.Pod) error {
	running := make(map[string]bool, len(pods))
	for _, p := range pods {
		if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			running[string(p.UID)] = true
		}
	}
	var errs []error
	for _, uid := range policy.Finished(b.Ledger.Entries(), running) {
		errs = append(errs, b.Ledger.Settle(ctx, uid, now))
	}
	return errors.Join(errs...)
}

// taint makes the taint match the wanted state.
func (b *Breaker) taint(ctx context.Context, w policy.Taint) error {
	value := w.Value
	if w.Want {
		if b.Tainted() && b.shown == value {
			return nil
		}
		changed, err := b.Tainter.Ensure(ctx, value)
		if err == nil {
			b.setTainted(true, changed, value)
		}
		return err
	}
	if b.tainted != nil && !*b.tainted {
		return nil
	}
	changed, err := b.Tainter.Remove(ctx)
	if err == nil {
		b.setTainted(false, changed, value)
	}
	return err
}

func (b *Breaker) setTainted(on, changed bool, value string) {
	b.tainted, b.shown = &on, value
	if changed && b.Events != nil {
		b.Events.TaintChanged(on, value)
	}
}

// Avoiding implements loopBreaker.
func (b *Breaker) Avoiding(now time.Time) int { return len(b.Ledger.Avoidances(now)) }

// Tainted reports whether the last successful change left the taint on.
func (b *Breaker) Tainted() bool { return b.tainted != nil && *b.tainted }

// Release removes the taint when the agent stops, so that an agent that is uninstalled or crashes for
// good does not leave the node unschedulable; a restarted agent puts it back at its first sync if the
// pressure still wants it.
func (b *Breaker) Release(ctx context.Context) error {
	if b.tainted != nil && !*b.tainted {
		return nil
	}
	_, err := b.Tainter.Remove(ctx)
	return err
}
