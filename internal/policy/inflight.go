package policy

import "time"

// The in-flight rule is the one rule for how long an eviction (or kill) counts as under way, whoever
// remembers it: the State's flights, the ledger entries a restarted agent reads (Input.InFlight), and
// the ledger's own pruning (History.Prune keeps an unsettled entry while this rule holds for it). An
// eviction is in flight from its request until its pod leaves the node's pod list; a pod still listed
// and not terminating is in flight only for TTL after the request (a lost eviction, or a pod killed on
// the node that restarted: it is evicted again after TTL); a terminating pod is in flight as long as it
// is listed.

// InFlightRule is the in-flight rule with its lifetime (Config.InFlightTTL).
type InFlightRule struct {
	// TTL is how long a requested eviction of a pod still listed and not terminating counts as in
	// flight; zero or less means DefaultInFlightTTL.
	TTL time.Duration
}

// InFlight returns the configuration's in-flight rule.
func (c Config) InFlight() InFlightRule { return InFlightRule{TTL: c.InFlightTTL} }

// PodState is what the rule needs to know of an evicted pod now.
type PodState int

// Pod states.
const (
	PodGone        PodState = iota // no longer listed (for the ledger: settled)
	PodListed                      // listed, no deletion timestamp
	PodTerminating                 // listed with a deletion timestamp
)

// stateOf is the rule's view of a pod: gone when not listed.
func stateOf(p Pod, listed bool) PodState {
	switch {
	case !listed:
		return PodGone
	case p.Terminating():
		return PodTerminating
	}
	return PodListed
}

// Holds reports whether an eviction requested at `at` is still in flight at now, for a pod in state s.
func (r InFlightRule) Holds(at, now time.Time, s PodState) bool {
	switch s {
	case PodGone:
		return false
	case PodTerminating:
		return true
	}
	return now.Sub(at) < r.ttl()
}

func (r InFlightRule) ttl() time.Duration {
	if r.TTL <= 0 {
		return DefaultInFlightTTL
	}
	return r.TTL
}
