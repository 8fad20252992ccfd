package sim

import (
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// notifier is one memcg threshold notifier: it fires when available crosses level either way.
type notifier struct {
	sig   signal.Signal
	level int64
	below bool
	// th is the threshold's index in the kubelet's configuration: its handler (kubelet.handlers).
	th int
}

// handler is the goroutine of one of the kubelet's memory threshold notifiers: it synchronizes on each
// event it receives, and receives none while that synchronize runs, which is until the pod it evicted
// is killed. The kernel's events meanwhile wait: one in the notifier's blocked send, the others counted
// in its eventfd and read as one. So a kill during which available crossed the threshold, either way,
// is followed at once by a synchronize, and by a second one after that synchronize's own kill if it
// crossed more than once: the real kubelet's step runs evict three pods in a row, each one just after
// the kill before it (docs/simulate.md, "Validation").
type handler struct {
	// busyUntil is when the handler's synchronize returns (its kill is done).
	busyUntil time.Time
	// pending counts the events waiting for the handler (at most maxPending).
	pending int
	// due marks a handler whose event is answered by the notified sync at the current instant.
	due bool
	// last is the notifier's last crossing (the notified sync's detail).
	last notifier
}

// maxPending is how many events wait for a busy handler: one in the blocked send, one for the
// eventfd's count.
const maxPending = 2

// arm (re)arms the memcg notifiers on the memory thresholds, at most every NotifierRefresh, as the
// kubelet's synchronize does after reading the summary. The kubelet sets the notifier on
// memory.usage_in_bytes at capacity − threshold + inactive_file, so that it fires when the working
// set crosses capacity − threshold: available crossing the threshold. A re-arm closes the old eventfd:
// the events it counted are lost, the one in the blocked send is not.
func (k *kubelet) arm(snap signal.Snapshot, t time.Time) {
	if !k.cfg.KernelMemcgNotification || !k.lastArm.IsZero() && t.Sub(k.lastArm) <= k.timing.NotifierRefresh {
		return
	}
	k.lastArm = t
	k.armed = k.armed[:0]
	if len(k.handlers) != len(k.cfg.Thresholds) {
		k.handlers = make([]handler, len(k.cfg.Thresholds))
	}
	for i := range k.handlers {
		k.handlers[i].pending = min(k.handlers[i].pending, 1)
	}
	for i, th := range k.cfg.Thresholds {
		o, ok := snap.Observations[th.Signal]
		if th.Inert() || !th.Signal.IsMemory() || !ok {
			continue
		}
		level := th.Value.Resolve(o.Capacity)
		k.armed = append(k.armed, notifier{sig: th.Signal, level: level, below: o.Available < level, th: i})
	}
}

// crossed takes the observations of a tick: a notifier whose threshold available crossed fires. An
// idle handler answers at once (due); a busy one counts the event as pending. It reports whether a
// notified sync is due now.
func (k *kubelet) crossed(obs map[signal.Signal]signal.Observation, t time.Time) bool {
	due := false
	for i := range k.armed {
		n := &k.armed[i]
		o, have := obs[n.sig]
		if !have {
			continue
		}
		below := o.Available < n.level
		if below == n.below {
			continue
		}
		n.below = below
		h := &k.handlers[n.th]
		h.last = *n
		if t.Before(h.busyUntil) {
			h.pending = min(h.pending+1, maxPending)
			continue
		}
		h.due, due = true, true
	}
	return due
}

// notified runs the notified sync at t: the handlers due now (fired at this tick, or done with their
// kill with an event pending) answer with one synchronize and are busy until its kill is done. A
// handler's pending event is answered when it is free (pushed by the caller as evKubeletNotify).
func (k *kubelet) notified(r *run, t time.Time) {
	queued := false
	for i := range k.handlers {
		h := &k.handlers[i]
		if !h.due && h.pending > 0 && !t.Before(h.busyUntil) {
			h.pending--
			h.due, queued = true, true
		}
	}
	first := -1
	for i := range k.handlers {
		if first < 0 && k.handlers[i].due {
			first = i
		}
	}
	if first < 0 {
		return
	}
	// A sync at this very instant (the loop's) is the one the handlers' would be: they run beside it,
	// rank the same pods and wait for the same kills.
	uids := k.lastEvicted
	if !k.lastSync.Equal(t) {
		n := k.handlers[first].last
		detail := "memcg notifier: available crossed " + formatMi(n.level) + ": synchronize now"
		if queued {
			detail = "memcg notifier: available crossed " + formatMi(n.level) +
				" during the last notified kill: its event waited for it, synchronize now"
		}
		r.add(Event{At: t, Actor: ActorKubelet, Kind: KindNotify, Subject: string(n.sig), Detail: detail})
		uids = k.sync(r, t, "memcg notification")
	}
	busy := t
	for _, uid := range uids {
		if kl, ok := r.node.killed[uid]; ok && kl.released.After(busy) {
			busy = kl.released
		}
	}
	for i := range k.handlers {
		if h := &k.handlers[i]; h.due {
			h.busyUntil, h.due = busy, false
		}
	}
	if busy.After(t) && !r.q.hasAt(evKubeletNotify, busy) {
		r.q.push(busy, evKubeletNotify)
	}
}
