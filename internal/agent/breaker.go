package agent

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/actuate"
)

// taintEvents records the loop breaker's events (actuate.Events).
type taintEvents interface {
	Loop(l actuate.Loop)
	TaintChanged(added bool, value string)
}

// taintWriter changes the node's taint (actuate.Tainter).
type taintWriter interface {
	Ensure(ctx context.Context, value string) (bool, error)
	Remove(ctx context.Context) (bool, error)
}

// Breaker is the eviction-loop breaker: the node carries the NoSchedule taint (actuate.TaintKey) while
// it is under pressure, for Cooldown after, and while the ledger holds it after a loop; a pod of an owner
// evicted here within the ledger's window that lands here again is a loop (Warning event on the owner).
// It also settles the ledger's entries of pods that are gone.
type Breaker struct {
	Ledger   *actuate.PersistentLedger
	Tainter  taintWriter
	Events   taintEvents
	Cooldown time.Duration

	lastPressure time.Time
	tainted      *bool // nil until the first successful change or check
	value        string
	shown        string // the value the taint has on the node
}

// Sync implements loopBreaker.
func (b *Breaker) Sync(ctx context.Context, now time.Time, pressure bool, sig string, pods []*corev1.Pod) (int, error) {
	if pressure {
		b.lastPressure = now
		if sig != "" {
			b.value = sig
		}
	}
	var errs []error
	errs = append(errs, b.settle(ctx, now, pods))
	loops, err := b.observe(ctx, now, pods)
	errs = append(errs, err, b.taint(ctx, now), b.Ledger.Prune(ctx, now))
	return loops, errors.Join(errs...)
}

// settle marks the ledger's evictions of pods no longer listed as finished.
func (b *Breaker) settle(ctx context.Context, now time.Time, pods []*corev1.Pod) error {
	listed := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			listed[p.UID] = true
		}
	}
	var errs []error
	for _, e := range b.Ledger.Entries() {
		if e.SettledAt == nil && !listed[e.UID] {
			errs = append(errs, b.Ledger.Settle(ctx, e.UID, now))
		}
	}
	return errors.Join(errs...)
}

// observe hands the ledger every live pod created at or after an eviction of its owner here.
func (b *Breaker) observe(ctx context.Context, now time.Time, pods []*corev1.Pod) (int, error) {
	entries := b.Ledger.Entries()
	n := 0
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		owner := actuate.ControllerOf(p)
		if owner.IsZero() || !createdAfterEviction(p, owner, entries) {
			continue
		}
		a := actuate.Arrival{UID: p.UID, Namespace: p.Namespace, Name: p.Name, Owner: owner}
		l, ok, err := b.Ledger.Observe(ctx, a, now)
		errs = append(errs, err)
		if ok {
			n++
			if b.Events != nil {
				b.Events.Loop(l)
			}
		}
	}
	return n, errors.Join(errs...)
}

// createdAfterEviction reports whether p was created at or after (to the second) an eviction of owner,
// so pods that were already on the node never count as replacements.
func createdAfterEviction(p *corev1.Pod, owner actuate.Owner, entries []actuate.Entry) bool {
	for _, e := range entries {
		same := e.Owner.Kind == owner.Kind && e.Owner.Namespace == owner.Namespace && e.Owner.Name == owner.Name
		if same && e.UID != p.UID && !p.CreationTimestamp.Time.Before(e.At.Truncate(time.Second)) {
			return true
		}
	}
	return false
}

// taint makes the taint match the wanted state.
func (b *Breaker) taint(ctx context.Context, now time.Time) error {
	hold, held := b.Ledger.Hold(now)
	want := held || (!b.lastPressure.IsZero() && now.Sub(b.lastPressure) < b.Cooldown)
	value := b.value
	if held && value == "" {
		value = hold.Signal
	}
	if value == "" {
		value = "pressure"
	}
	if want {
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

// Tainted reports whether the last successful change left the taint on.
func (b *Breaker) Tainted() bool { return b.tainted != nil && *b.tainted }

// Release removes the taint when the agent stops, so that an agent that is uninstalled or crashes for
// good does not leave the node unschedulable; a restarted agent puts it back at its first sync if the
// pressure, the cool-down or the ledger's hold still want it.
func (b *Breaker) Release(ctx context.Context) error {
	if b.tainted != nil && !*b.tainted {
		return nil
	}
	_, err := b.Tainter.Remove(ctx)
	return err
}
