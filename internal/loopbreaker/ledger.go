package loopbreaker

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/owner"
	"github.com/kube-pressure/pressure/internal/policy"
)

// Ledger defaults.
const (
	DefaultLoopWindow    = 10 * time.Minute
	DefaultLoopCooldown  = 5 * time.Minute
	DefaultLoopEvictions = 2
	DefaultLoopAvoidance = 30 * time.Minute
	DefaultLedgerEntries = 64
)

// LedgerPolicy sets the ledger's windows. Zero fields take the defaults above.
type LedgerPolicy struct {
	// Window: evictions of the same owner at most Window apart count together for loop detection.
	Window time.Duration
	// Cooldown: how long new pods of an evicted owner avoid the node after the eviction.
	Cooldown time.Duration
	// LoopEvictions: an eviction is a loop when its pod was created after an earlier eviction of the
	// same owner here (a replacement that came back) and the owner has at least LoopEvictions evictions
	// within the window, this one included.
	LoopEvictions int
	// LoopCooldown: how long the owner's new pods avoid the node after a loop (the escalation).
	LoopCooldown time.Duration
	// InFlight is the policy's in-flight rule (policy.Config.InFlight): an entry not settled is kept
	// while it holds, whatever its age, so that a restarted agent still counts the eviction in flight.
	// The ledger stores; whether an entry is in flight is the policy's to say (policy.Input.InFlight).
	InFlight policy.InFlightRule
	// MaxEntries bounds the ledger (and the annotation that stores it); the oldest entries go first.
	// Avoidances are bounded by it too.
	MaxEntries int
}

func (p LedgerPolicy) withDefaults() LedgerPolicy {
	if p.Window <= 0 {
		p.Window = DefaultLoopWindow
	}
	if p.Cooldown <= 0 {
		p.Cooldown = DefaultLoopCooldown
	}
	if p.LoopEvictions <= 0 {
		p.LoopEvictions = DefaultLoopEvictions
	}
	if p.LoopCooldown <= 0 {
		p.LoopCooldown = DefaultLoopAvoidance
	}
	if p.MaxEntries <= 0 {
		p.MaxEntries = DefaultLedgerEntries
	}
	return p
}

// Entry is one eviction the agent carried out on this node.
type Entry struct {
	UID       types.UID `json:"uid"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Owner     owner.Ref `json:"owner,omitzero"`
	Signal    string    `json:"signal,omitempty"`
	// Rung is the ladder's rung that carried the eviction out ("eviction-api", "delete", "cgroup-kill").
	Rung string    `json:"rung,omitempty"`
	At   time.Time `json:"at"`
	// Created is the evicted pod's creation time (zero when unknown).
	Created time.Time `json:"created,omitzero"`
	// SettledAt is when the agent saw the pod gone; nil while the eviction is in flight.
	SettledAt *time.Time `json:"settledAt,omitempty"`
	// Replacements is read from ledgers of version 1 (which counted arrivals) and never written.
	Replacements []types.UID `json:"replacements,omitempty"`
}

// Avoidance says that new pods of Owner avoid this node until Until (the chart's
// MutatingAdmissionPolicy adds a required node anti-affinity to them).
type Avoidance struct {
	Owner owner.Ref `json:"owner"`
	Until time.Time `json:"until"`
	// Loop reports an escalated avoidance (the owner was detected in an eviction loop).
	Loop bool `json:"loop,omitempty"`
}

// EvictionLoop says that an owner's pod was evicted again from this node: a replacement came back and met the
// same fate.
type EvictionLoop struct {
	Owner owner.Ref
	Pod   Pod
	// Evictions counts the owner's evictions on this node within the window, this one included.
	Evictions int
	// Since is the time since the owner's previous eviction.
	Since  time.Duration
	Signal string
	// Until is when the owner's escalated avoidance of the node ends.
	Until time.Time
}

// Pod names one pod incarnation.
type Pod struct {
	Namespace, Name string
	UID             types.UID
}

// Avoidable reports whether new pods of o can be kept off a node: a controller that re-creates pods
// anywhere, identified by UID. Bare pods, DaemonSet pods (bound to their node) and static pods (owned
// by the Node) get nothing.
func Avoidable(o owner.Ref) bool {
	return !o.IsZero() && o.UID != "" && o.Kind != "DaemonSet" && o.Kind != "Node"
}

// Ledger is the node's memory of recent evictions and of the avoidances they started. Pure: every method
// takes the time. Not safe for concurrent use (PersistentLedger is).
type Ledger struct {
	policy  LedgerPolicy
	entries []Entry     // sorted by At, then UID
	avoid   []Avoidance // sorted by owner UID; at most one per owner
}

// NewLedger returns an empty ledger.
func NewLedger(p LedgerPolicy) *Ledger { return &Ledger{policy: p.withDefaults()} }

// Record adds (or replaces, by UID) an eviction. For an avoidable owner it starts (or extends) the
// owner's avoidance of the node, and when the eviction closes a loop it escalates the avoidance to
// LoopCooldown and returns the Loop.
func (l *Ledger) Record(e Entry) (EvictionLoop, bool) {
	l.entries = append(l.entries[:0:0], l.without(e.UID)...)
	l.entries = append(l.entries, e)
	l.sort()
	if n := len(l.entries) - l.policy.MaxEntries; n > 0 {
		l.entries = l.entries[n:]
	}
	if !Avoidable(e.Owner) {
		return EvictionLoop{}, false
	}
	loop, ok := l.loop(e)
	until := e.At.Add(l.policy.Cooldown)
	if ok {
		until = e.At.Add(l.policy.LoopCooldown)
	}
	a := l.Avoid(e.Owner, until, ok)
	loop.Until = a.Until
	return loop, ok
}

// loop reports whether e closes a loop: its pod was created at or after (to the second) an earlier
// eviction of the same owner within the window, and the owner has LoopEvictions evictions there.
func (l *Ledger) loop(e Entry) (EvictionLoop, bool) {
	n, replacement := 0, false
	var prev time.Time
	for _, x := range l.entries {
		if !x.Owner.Same(e.Owner) || e.At.Sub(x.At) > l.policy.Window || x.At.After(e.At) {
			continue
		}
		n++
		if x.UID == e.UID {
			continue
		}
		if x.At.After(prev) {
			prev = x.At
		}
		if !e.Created.IsZero() && !e.Created.Before(x.At.Truncate(time.Second)) {
			replacement = true
		}
	}
	if !replacement || n < l.policy.LoopEvictions {
		return EvictionLoop{}, false
	}
	return EvictionLoop{Owner: e.Owner, Pod: Pod{Namespace: e.Namespace, Name: e.Name, UID: e.UID}, Evictions: n,
		Since: e.At.Sub(prev), Signal: e.Signal}, true
}

// Avoid makes new pods of o avoid the node until at least until (an existing longer avoidance is kept;
// loop marks it escalated) and returns the avoidance now in force. Owners that are not Avoidable are
// ignored.
func (l *Ledger) Avoid(o owner.Ref, until time.Time, loop bool) Avoidance {
	if !Avoidable(o) {
		return Avoidance{}
	}
	for i := range l.avoid {
		a := &l.avoid[i]
		if a.Owner.UID != o.UID {
			continue
		}
		if until.After(a.Until) {
			a.Until = until
		}
		a.Loop = a.Loop || loop
		return *a
	}
	a := Avoidance{Owner: o, Until: until, Loop: loop}
	l.avoid = append(l.avoid, a)
	sortAvoidances(l.avoid)
	if n := len(l.avoid) - l.policy.MaxEntries; n > 0 {
		l.dropSoonest(n)
	}
	return a
}

// Restore puts the owner's avoidance back as it was (prev.Until zero: none), undoing an Avoid.
func (l *Ledger) Restore(o owner.Ref, prev Avoidance) {
	out := l.avoid[:0:0]
	for _, a := range l.avoid {
		if a.Owner.UID != o.UID {
			out = append(out, a)
		}
	}
	if !prev.Until.IsZero() {
		out = append(out, prev)
		sortAvoidances(out)
	}
	l.avoid = out
}

// Avoidance returns the owner's avoidance (zero Until when there is none).
func (l *Ledger) Avoidance(o owner.Ref) Avoidance {
	for _, a := range l.avoid {
		if a.Owner.UID == o.UID && o.UID != "" {
			return a
		}
	}
	return Avoidance{}
}

// dropSoonest removes the n avoidances that end first (ties: by owner UID).
func (l *Ledger) dropSoonest(n int) {
	byEnd := append([]Avoidance(nil), l.avoid...)
	sort.Slice(byEnd, func(i, j int) bool {
		if !byEnd[i].Until.Equal(byEnd[j].Until) {
			return byEnd[i].Until.Before(byEnd[j].Until)
		}
		return byEnd[i].Owner.UID < byEnd[j].Owner.UID
	})
	drop := map[types.UID]bool{}
	for _, a := range byEnd[:n] {
		drop[a.Owner.UID] = true
	}
	out := l.avoid[:0:0]
	for _, a := range l.avoid {
		if !drop[a.Owner.UID] {
			out = append(out, a)
		}
	}
	l.avoid = out
}

func sortAvoidances(as []Avoidance) {
	sort.Slice(as, func(i, j int) bool { return as[i].Owner.UID < as[j].Owner.UID })
}

// Avoidances returns the avoidances in force at now, by owner UID.
func (l *Ledger) Avoidances(now time.Time) []Avoidance {
	var out []Avoidance
	for _, a := range l.avoid {
		if now.Before(a.Until) {
			out = append(out, a)
		}
	}
	return out
}

func (l *Ledger) without(uid types.UID) []Entry {
	out := make([]Entry, 0, len(l.entries))
	for _, e := range l.entries {
		if e.UID != uid {
			out = append(out, e)
		}
	}
	return out
}

func (l *Ledger) sort() {
	sort.Slice(l.entries, func(i, j int) bool {
		a, b := l.entries[i], l.entries[j]
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.UID < b.UID
	})
}

func (l *Ledger) find(uid types.UID) *Entry {
	for i := range l.entries {
		if l.entries[i].UID == uid {
			return &l.entries[i]
		}
	}
	return nil
}

// Settle marks the eviction of uid as finished (the pod is gone). Unknown UIDs are ignored.
func (l *Ledger) Settle(uid types.UID, now time.Time) bool {
	e := l.find(uid)
	if e == nil || e.SettledAt != nil {
		return false
	}
	t := now
	e.SettledAt = &t
	return true
}

// Prune forgets entries nobody needs any more (older than the window, and settled or no longer in
// flight by the policy's rule) and
// avoidances that ended. It reports whether anything changed.
func (l *Ledger) Prune(now time.Time) bool {
	keep := l.entries[:0:0]
	for _, e := range l.entries {
		old := now.Sub(e.At) > l.policy.Window
		state := policy.PodListed
		if e.SettledAt != nil {
			state = policy.PodGone
		}
		done := !l.policy.InFlight.Holds(e.At, now, state)
		if !(old && done) {
			keep = append(keep, e)
		}
	}
	changed := len(keep) != len(l.entries)
	l.entries = keep
	avoid := l.Avoidances(now)
	changed = changed || len(avoid) != len(l.avoid)
	l.avoid = avoid
	return changed
}

// Entries returns a deep copy of the entries, oldest first.
func (l *Ledger) Entries() []Entry {
	out := make([]Entry, len(l.entries))
	for i, e := range l.entries {
		if e.SettledAt != nil {
			t := *e.SettledAt
			e.SettledAt = &t
		}
		e.Replacements = append([]types.UID(nil), e.Replacements...)
		out[i] = e
	}
	return out
}

// merge adds other's entries and avoidances to l (an entry l already has for a UID is kept), then
// caps the entries as Record does.
func (l *Ledger) merge(other *Ledger) {
	for _, e := range other.entries {
		if l.find(e.UID) == nil {
			l.entries = append(l.entries, e)
		}
	}
	l.sort()
	if n := len(l.entries) - l.policy.MaxEntries; n > 0 {
		l.entries = l.entries[n:]
	}
	for _, a := range other.avoid {
		l.Avoid(a.Owner, a.Until, a.Loop)
	}
}
