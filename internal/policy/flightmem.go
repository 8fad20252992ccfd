package policy

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// A pod's memory stats can go before its memory does: the kubelet removes the pod's cgroup once its
// containers are dead, and the kernel moves the pages still charged to it (page cache above all) to the
// parent cgroup, which keeps them until they are uncharged or the pod's emptyDir is deleted. For that
// while the signals still count the pod's memory as used although no stats name it. Crediting nothing
// then (the pod's memory taken as free) evicts the next pod for memory that is about to come back; a
// real node showed it, 0.5 s after a page-cache reader's eviction (test/e2e TestReclaimAwareCacheOnly).
//
// So a flight remembers, at each step that measured its pod, the credit it had and the raw memory
// signals; once the stats are gone its credit is that amount less what the signals have risen since:
// what has come back is no longer credited, and nothing is credited twice.

// see records, for every flight whose pod has memory stats at this step, its credit (the lower of its
// bound and its working set now) and the raw memory signals: what goneCredit starts from.
func (st *State) see(now time.Time, pods []Pod, raw signal.Snapshot) {
	for _, pod := range pods {
		f, ok := st.flights[pod.Candidate.UID]
		if !ok || !f.memKnown {
			continue
		}
		ws, ok := workingSet(pod.Candidate)
		if !ok {
			continue
		}
		c := min(f.memory, ws)
		f.seen = seenMemory{known: true, at: now, measured: c}.update(c, raw)
		st.flights[pod.Candidate.UID] = f
	}
}

// update returns s with credit c and the raw memory signals of snap (a signal not observed keeps its
// last value).
func (s seenMemory) update(c int64, snap signal.Snapshot) seenMemory {
	s.credit = c
	if v, ok := available(snap, signal.AllocatableMemoryAvailable); ok {
		s.alloc, s.hasAlloc = v, true
	}
	if v, ok := available(snap, signal.MemoryAvailable); ok {
		s.node, s.hasNode = v, true
	}
	return s
}

// available returns the available amount of sig in snap, and whether it was observed.
func available(snap signal.Snapshot, sig signal.Signal) (int64, bool) {
	o, ok := snap.Observations[sig]
	return o.Available, ok
}

// goneCredit returns the memory credit of a flight whose pod has no memory stats now, the flight's memory
// as it is to be remembered for the next step, and a note for the trace: the credit left at the last step
// less the smallest rise since of a memory signal observed both then and now (the rise is what has come
// back; the smallest, so that memory freed elsewhere does not use up this pod's credit). The credit only
// falls: memory taken elsewhere later does not bring it back. Nothing when the pod was never measured in
// flight or no signal is comparable.
func goneCredit(s seenMemory, raw signal.Snapshot) (int64, seenMemory, string) {
	if !s.known {
		return 0, s, "memory stats gone, never measured in flight: no memory credit"
	}
	rise, ok := int64(0), false
	for _, c := range []struct {
		sig  signal.Signal
		then int64
		had  bool
	}{{signal.AllocatableMemoryAvailable, s.alloc, s.hasAlloc}, {signal.MemoryAvailable, s.node, s.hasNode}} {
		now, has := available(raw, c.sig)
		if !c.had || !has {
			continue
		}
		if d := max(now-c.then, 0); !ok || d < rise {
			rise, ok = d, true
		}
	}
	if !ok {
		return 0, s, "memory stats gone, no memory signal to compare: no memory credit"
	}
	next := s.update(max(s.credit-rise, 0), raw)
	return next.credit, next, fmt.Sprintf("memory stats gone: %s when last measured (%s), %s of it not back yet (the memory signals rose %s since the last step)",
		threshold.FormatQuantity(s.measured, true), stamp(s.at), threshold.FormatQuantity(next.credit, true), threshold.FormatQuantity(rise, true))
}
