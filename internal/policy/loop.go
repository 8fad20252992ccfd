package policy

import (
	"sort"
	"time"
)

// The loop rules: what the agent remembers of its evictions on the node (History), when an eviction
// closes an eviction loop (a replacement that came back and met the same fate), and how long new pods
// of the evicted owner then avoid the node (avoid.go). The shell stores the History (loopbreaker: the
// Node annotation, the avoidance ConfigMap); it decides nothing.

// Loop rule defaults.
const (
	DefaultLoopWindow    = 10 * time.Minute
	DefaultLoopCooldown  = 5 * time.Minute
	DefaultLoopEvictions = 2
	DefaultLoopAvoidance = 30 * time.Minute
	DefaultLedgerEntries = 64
)

// LoopConfig sets the loop rules' windows. Zero fields take the defaults above.
type LoopConfig struct {
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
	// InFlight is the in-flight rule (Config.InFlight): an entry not settled is kept while it holds,
	// whatever its age, so that a restarted agent still counts the eviction in flight (Input.InFlight).
	InFlight InFlightRule
	// MaxEntries bounds the history (and the annotation that stores it); the oldest entries go first.
	// Avoidances are bounded by it too.
	MaxEntries int
}

func (c LoopConfig) withDefaults() LoopConfig {
	if c.Window <= 0 {
		c.Window = DefaultLoopWindow
	}
	if c.Cooldown <= 0 {
		c.Cooldown = DefaultLoopCooldown
	}
	if c.LoopEvictions <= 0 {
		c.LoopEvictions = DefaultLoopEvictions
	}
	if c.LoopCooldown <= 0 {
		c.LoopCooldown = DefaultLoopAvoidance
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultLedgerEntries
	}
	return c
}

// HistoryEntry is one eviction the agent carried out on this node.
type HistoryEntry struct {
	UID, Namespace, Name string
	Owner                Workload
	Signal               string
	// Rung is the ladder's rung that carried the eviction out ("eviction-api", "delete", "cgroup-kill").
	Rung string
	At   time.Time
	// Created is the evicted pod's creation time (zero when unknown).
	Created time.Time
	// SettledAt is when the agent saw the pod gone; nil while the eviction is in flight.
	SettledAt *time.Time
}

// EvictionLoop says that an owner's pod was evicted again from this node: a replacement came back and
// met the same fate.
type EvictionLoop struct {
	Owner Workload
	Pod   PodRef
	// Evictions counts the owner's evictions on this node within the window, this one included.
	Evictions int
	// Since is the time since the owner's previous eviction.
	Since  time.Duration
	Signal string
	// Until is when the owner's escalated avoidance of the node ends.
	Until time.Time
}

// History is the node's memory of recent evictions and of the avoidances they started, with the rules
// that change it. Pure: every method takes the time. Not safe for concurrent use.
type History struct {
	cfg     LoopConfig
	entries []HistoryEntry // sorted by At, then UID
	avoid   []Avoidance    // sorted by owner UID; at most one per owner
}

// NewHistory returns an empty history.
func NewHistory(c LoopConfig) *History { return &History{cfg: c.withDefaults()} }

// HistoryOf returns the history a store kept (History.Stored): the entries by time, the newest
// MaxEntries of them, and the avoidances as Avoid keeps them.
func HistoryOf(c LoopConfig, entries []HistoryEntry, avoid []Avoidance) *History {
	h := NewHistory(c)
	h.entries = append(h.entries, entries...)
	h.sortAndCap()
	for _, a := range avoid {
		h.Avoid(a.Owner, a.Until, a.Loop)
	}
	return h
}

// Stored returns copies of what a store keeps: every entry (oldest first) and every avoidance, ended or
// not (by owner UID).
func (h *History) Stored() ([]HistoryEntry, []Avoidance) {
	return h.Entries(), append([]Avoidance(nil), h.avoid...)
}

// Record adds (or replaces, by UID) an eviction. For an avoidable owner it starts (or extends) the
// owner's avoidance of the node, and when the eviction closes a loop it escalates the avoidance to
// LoopCooldown and returns the loop.
func (h *History) Record(e HistoryEntry) (EvictionLoop, bool) {
	h.entries = append(h.entries[:0:0], h.without(e.UID)...)
	h.entries = append(h.entries, e)
	h.sortAndCap()
	if !Avoidable(e.Owner) {
		return EvictionLoop{}, false
	}
	loop, ok := h.loop(e)
	until := e.At.Add(h.cfg.Cooldown)
	if ok {
		until = e.At.Add(h.cfg.LoopCooldown)
	}
	a := h.Avoid(e.Owner, until, ok)
	loop.Until = a.Until
	return loop, ok
}

// loop reports whether e closes a loop: its pod was created at or after (to the second) an earlier
// eviction of the same owner within the window, and the owner has LoopEvictions evictions there.
func (h *History) loop(e HistoryEntry) (EvictionLoop, bool) {
	n, replacement := 0, false
	var prev time.Time
	for _, x := range h.entries {
		if !x.Owner.Same(e.Owner) || e.At.Sub(x.At) > h.cfg.Window || x.At.After(e.At) {
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
	if !replacement || n < h.cfg.LoopEvictions {
		return EvictionLoop{}, false
	}
	return EvictionLoop{Owner: e.Owner, Pod: PodRef{Namespace: e.Namespace, Name: e.Name, UID: e.UID}, Evictions: n,
		Since: e.At.Sub(prev), Signal: e.Signal}, true
}

// Settle marks the eviction of uid as finished (the pod is gone). Unknown UIDs are ignored.
func (h *History) Settle(uid string, now time.Time) bool {
	e := h.find(uid)
	if e == nil || e.SettledAt != nil {
		return false
	}
	t := now
	e.SettledAt = &t
	return true
}

// Finished returns the UIDs of the entries still in flight whose pod is no longer running on the node
// (running says which UIDs are listed in a non-terminal phase), oldest entry first: their eviction is
// over, and the shell settles them (History.Settle, through its store).
func Finished(entries []HistoryEntry, running map[string]bool) []string {
	var out []string
	for _, e := range entries {
		if e.SettledAt == nil && !running[e.UID] {
			out = append(out, e.UID)
		}
	}
	return out
}

// Prune forgets entries nobody needs any more (older than the window, and settled or no longer in
// flight by the in-flight rule) and avoidances that ended. It reports whether anything changed.
func (h *History) Prune(now time.Time) bool {
	keep := h.entries[:0:0]
	for _, e := range h.entries {
		old := now.Sub(e.At) > h.cfg.Window
		state := PodListed
		if e.SettledAt != nil {
			state = PodGone
		}
		done := !h.cfg.InFlight.Holds(e.At, now, state)
		if !(old && done) {
			keep = append(keep, e)
		}
	}
	changed := len(keep) != len(h.entries)
	h.entries = keep
	avoid := h.Avoidances(now)
	changed = changed || len(avoid) != len(h.avoid)
	h.avoid = avoid
	return changed
}

// Entries returns a deep copy of the entries, oldest first.
func (h *History) Entries() []HistoryEntry {
	out := make([]HistoryEntry, len(h.entries))
	for i, e := range h.entries {
		if e.SettledAt != nil {
			t := *e.SettledAt
			e.SettledAt = &t
		}
		out[i] = e
	}
	return out
}

// Merge adds other's entries and avoidances to h (an entry h already has for a UID is kept), then caps
// the entries as Record does.
func (h *History) Merge(other *History) {
	for _, e := range other.entries {
		if h.find(e.UID) == nil {
			h.entries = append(h.entries, e)
		}
	}
	h.sortAndCap()
	for _, a := range other.avoid {
		h.Avoid(a.Owner, a.Until, a.Loop)
	}
}

// AvoidanceAfter returns what carrying out the eviction e would do to its owner's avoidance of the node, by
// the same rules as the ladder (AvoidBefore the eviction, Record after it): the avoidance then in force
// (zero for an owner that is not Avoidable), and the loop when e closes one. h is not changed.
func (h *History) AvoidanceAfter(e HistoryEntry) (Avoidance, EvictionLoop, bool) {
	c := &History{cfg: h.cfg, entries: h.Entries(), avoid: append([]Avoidance(nil), h.avoid...)}
	c.AvoidBefore(e.Owner, e.At)
	loop, ok := c.Record(e)
	return c.Avoidance(e.Owner), loop, ok
}

// LedgerOf is the policy's read of the history's entries (Read.Ledger): which evictions are recorded,
// when, by which rung, and whether they settled.
func LedgerOf(entries []HistoryEntry) *Ledger {
	l := &Ledger{Evictions: make([]LedgerEviction, 0, len(entries))}
	for _, e := range entries {
		l.Evictions = append(l.Evictions, LedgerEviction{UID: e.UID, At: e.At, Rung: e.Rung, Settled: e.SettledAt != nil})
	}
	return l
}

func (h *History) without(uid string) []HistoryEntry {
	out := make([]HistoryEntry, 0, len(h.entries))
	for _, e := range h.entries {
		if e.UID != uid {
			out = append(out, e)
		}
	}
	return out
}

// sortAndCap sorts the entries by time, then UID, and keeps the newest MaxEntries. Record keeps UIDs
// unique, which makes the order total; the sort is stable so that a stored history holding a UID twice
// (HistoryOf) still reads the same every time.
func (h *History) sortAndCap() {
	sort.SliceStable(h.entries, func(i, j int) bool {
		a, b := h.entries[i], h.entries[j]
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.UID < b.UID
	})
	if n := len(h.entries) - h.cfg.MaxEntries; n > 0 {
		h.entries = h.entries[n:]
	}
}

func (h *History) find(uid string) *HistoryEntry {
	for i := range h.entries {
		if h.entries[i].UID == uid {
			return &h.entries[i]
		}
	}
	return nil
}
