package actuate

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Ledger defaults.
const (
	DefaultLoopWindow      = 10 * time.Minute
	DefaultLoopCooldown    = 5 * time.Minute
	DefaultInFlightTimeout = 10 * time.Minute
	DefaultLedgerEntries   = 64
)

// LedgerPolicy sets the ledger's windows. Zero fields take the defaults above.
type LedgerPolicy struct {
	// Window: a replacement arriving at most Window after an eviction of its owner is a loop.
	Window time.Duration
	// Cooldown: how long the taint stays after the last loop.
	Cooldown time.Duration
	// InFlightTimeout: an eviction not settled (pod still listed) after this long no longer blocks a new
	// request for the same UID, so a lost eviction cannot pin a pod forever.
	InFlightTimeout time.Duration
	// MaxEntries bounds the ledger (and the annotation that stores it); the oldest entries go first.
	MaxEntries int
}

func (p LedgerPolicy) withDefaults() LedgerPolicy {
	if p.Window <= 0 {
		p.Window = DefaultLoopWindow
	}
	if p.Cooldown <= 0 {
		p.Cooldown = DefaultLoopCooldown
	}
	if p.InFlightTimeout <= 0 {
		p.InFlightTimeout = DefaultInFlightTimeout
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
	Owner     Owner     `json:"owner,omitzero"`
	Signal    string    `json:"signal,omitempty"`
	Rung      Rung      `json:"rung,omitempty"`
	At        time.Time `json:"at"`
	// SettledAt is when the agent saw the pod gone; nil while the eviction is in flight.
	SettledAt *time.Time `json:"settledAt,omitempty"`
	// Replacements are the pods of the same owner that arrived on the node after this eviction (each
	// counted as a loop once).
	Replacements []types.UID `json:"replacements,omitempty"`
}

// Hold is the loop breaker's taint: keep it (value Signal) until Until.
type Hold struct {
	Signal string    `json:"signal"`
	Until  time.Time `json:"until"`
	Owner  Owner     `json:"owner,omitzero"`
}

// Arrival is a pod seen on the node.
type Arrival struct {
	UID       types.UID
	Namespace string
	Name      string
	Owner     Owner
}

// Loop says that an owner's replacement landed on the node again.
type Loop struct {
	Owner Owner
	Pod   Arrival
	// Evictions counts the owner's evictions on this node within the window.
	Evictions int
	// Since is the time since the owner's last eviction.
	Since  time.Duration
	Signal string
	// Until is when the taint may go (now + cooldown, or later if already held longer).
	Until time.Time
}

// Ledger is the node's memory of recent evictions. Pure: every method takes the time. Not safe for
// concurrent use (PersistentLedger is).
type Ledger struct {
	policy  LedgerPolicy
	entries []Entry // sorted by At, then UID
	hold    *Hold
}

// NewLedger returns an empty ledger.
func NewLedger(p LedgerPolicy) *Ledger { return &Ledger{policy: p.withDefaults()} }

// Record adds (or replaces, by UID) an eviction.
func (l *Ledger) Record(e Entry) {
	l.entries = append(l.entries[:0:0], l.without(e.UID)...)
	l.entries = append(l.entries, e)
	l.sort()
	if n := len(l.entries) - l.policy.MaxEntries; n > 0 {
		l.entries = l.entries[n:]
	}
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

// InFlight reports an eviction of uid that is neither settled nor older than the in-flight timeout.
func (l *Ledger) InFlight(uid types.UID, now time.Time) bool {
	e := l.find(uid)
	return e != nil && e.SettledAt == nil && now.Sub(e.At) < l.policy.InFlightTimeout
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

// Observe looks at a pod seen on the node. When the pod's owner had a pod evicted here within the
// window and this pod is another (new) one, it is a loop: the hold is extended to now + cooldown and
// the Loop is returned. Each arriving pod is counted once.
func (l *Ledger) Observe(a Arrival, now time.Time) (Loop, bool) {
	if a.Owner.IsZero() || l.find(a.UID) != nil {
		return Loop{}, false
	}
	var last *Entry
	n := 0
	for i := range l.entries {
		e := &l.entries[i]
		if !e.Owner.same(a.Owner) || now.Sub(e.At) > l.policy.Window || e.At.After(now) {
			continue
		}
		if containsUID(e.Replacements, a.UID) {
			return Loop{}, false
		}
		n++
		last = e
	}
	if last == nil {
		return Loop{}, false
	}
	last.Replacements = append(last.Replacements, a.UID)
	until := now.Add(l.policy.Cooldown)
	if l.hold == nil || until.After(l.hold.Until) {
		l.hold = &Hold{Signal: last.Signal, Until: until, Owner: a.Owner}
	}
	return Loop{Owner: a.Owner, Pod: a, Evictions: n, Since: now.Sub(last.At), Signal: last.Signal, Until: l.hold.Until}, true
}

func containsUID(s []types.UID, u types.UID) bool {
	for _, x := range s {
		if x == u {
			return true
		}
	}
	return false
}

// Hold reports whether the loop breaker's taint must be on the node at now, and with which value.
func (l *Ledger) Hold(now time.Time) (Hold, bool) {
	if l.hold == nil || !now.Before(l.hold.Until) {
		return Hold{}, false
	}
	return *l.hold, true
}

// Prune forgets entries nobody needs any more: settled or timed out, and older than the window.
// It reports whether anything changed.
func (l *Ledger) Prune(now time.Time) bool {
	keep := l.entries[:0:0]
	for _, e := range l.entries {
		old := now.Sub(e.At) > l.policy.Window
		done := e.SettledAt != nil || now.Sub(e.At) >= l.policy.InFlightTimeout
		if !(old && done) {
			keep = append(keep, e)
		}
	}
	changed := len(keep) != len(l.entries)
	l.entries = keep
	if l.hold != nil && !now.Before(l.hold.Until) {
		l.hold, changed = nil, true
	}
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
