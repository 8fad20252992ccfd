package policy

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// forget drops the flights the in-flight rule (InFlightRule) no longer holds for, and the refusals whose
// pause is over.
func (st *State) forget(now time.Time, pods []Pod, cfg Config) {
	listed := make(map[string]Pod, len(pods))
	for _, p := range pods {
		listed[p.Candidate.UID] = p
	}
	for uid, f := range st.flights {
		p, ok := listed[uid]
		if !cfg.InFlight().Holds(f.since, now, stateOf(p, ok)) {
			delete(st.flights, uid)
		}
	}
	for uid, r := range st.refused {
		if _, ok := listed[uid]; !ok || now.Sub(r.at) >= cfg.PDBRetry {
			delete(st.refused, uid)
		}
	}
}

// adopt starts the flights the policy did not plan: a terminating pod first seen (its deletion came
// from elsewhere, or the agent restarted), and a ledger entry of a pod still listed that the in-flight
// rule holds for (a restarted agent's earlier request). The credit bound is the pod's usage now: the best known
// of what it had when its eviction started.
func (st *State) adopt(now time.Time, pods []Pod, ledger []InFlight, cfg Config) {
	entries := map[string]InFlight{}
	for _, e := range ledger {
		if cur, ok := entries[e.UID]; !ok || e.At.After(cur.At) {
			entries[e.UID] = e
		}
	}
	for _, p := range pods {
		uid := p.Candidate.UID
		f, ok := st.flights[uid]
		switch {
		case p.Terminating() && (!ok || !f.observed):
			if !ok {
				f = st.bound(p.Candidate, now, "terminating")
			}
			f.observed = true
			st.flights[uid] = f
		case !ok:
			e, inLedger := entries[uid]
			if inLedger && cfg.InFlight().Holds(e.At, now, PodListed) {
				f = st.bound(p.Candidate, e.At, "in the ledger ("+e.Rung+")")
				f.observed = true
				st.flights[uid] = f
			}
		}
	}
}

// bound starts a flight at since whose credit is bounded by the pod's usage now: memory, threads, and its
// measured usage of every disk signal (on the filesystem layout of the State).
func (st *State) bound(c rank.Candidate, since time.Time, origin string) flight {
	f := flight{since: since, origin: origin}
	var layout signal.FilesystemLayout
	if st.layout != nil {
		layout = *st.layout
	}
	for _, sig := range signal.All() {
		if u, ok := rank.DiskUsage(sig, layout, c); ok {
			if f.disk == nil {
				f.disk = map[signal.Signal]int64{}
			}
			f.disk[sig] = u
		}
	}
	f.memory, f.memKnown = workingSet(c)
	if c.Stats != nil && c.Stats.ThreadCount != nil {
		f.pids, f.pidKnown = int64(*c.Stats.ThreadCount), true
	}
	return f
}

// workingSet is the candidate's measured memory working set, if it has one.
func workingSet(c rank.Candidate) (int64, bool) {
	if c.Stats == nil || c.Stats.MemoryWorkingSet == nil {
		return 0, false
	}
	return int64(*c.Stats.MemoryWorkingSet), true
}

// credit returns the in-flight pods' credits, by pod: what each had when its flight started, or what it
// has now if less; for a pod whose memory stats are gone, what it had when last measured less what the
// raw memory signals rose since (goneCredit); nothing for a pod terminating past its deletion timestamp
// plus TerminatingMargin.
func (st *State) credit(now time.Time, pods []Pod, raw signal.Snapshot, cfg Config, p *Plan) []Credit {
	var out []Credit
	for _, pod := range pods {
		c := pod.Candidate
		f, ok := st.flights[c.UID]
		if !ok {
			continue
		}
		ref := PodRef{UID: c.UID, Namespace: c.Namespace, Name: c.Name}
		why := f.origin + " at " + stamp(f.since)
		if pod.Terminating() {
			why = "terminating, grace period ends " + stamp(pod.DeletionTimestamp)
			if end := pod.DeletionTimestamp.Add(cfg.TerminatingMargin); !now.Before(end) {
				p.tr().add(KindInFlight, ref.String(), why+fmt.Sprintf(": past it by more than %s, no credit", cfg.TerminatingMargin))
				continue
			}
		}
		cr := Credit{Pod: ref, Why: why}
		cur := st.bound(c, now, "")
		switch {
		case f.memKnown && cur.memKnown:
			cr.Memory = min(f.memory, cur.memory)
		case f.memKnown:
			var note string
			cr.Memory, f.seen, note = goneCredit(f.seen, raw)
			st.flights[c.UID] = f
			cr.Why += "; " + note
		}
		if f.pidKnown && cur.pidKnown {
			cr.PIDs = min(f.pids, cur.pids)
		}
		disk := ""
		for _, sig := range signal.All() {
			was, ok1 := f.disk[sig]
			is, ok2 := cur.disk[sig]
			if amount := min(was, is); ok1 && ok2 && amount > 0 {
				cr.Disk = append(cr.Disk, DiskCredit{Signal: sig, Amount: amount})
				disk += ", " + formatRelease(sig, Release{Amount: amount, Known: true}) + " " + string(sig)
			}
		}
		p.tr().add(KindInFlight, ref.String(), fmt.Sprintf("%s: credit %s memory, %d threads%s", cr.Why,
			threshold.FormatQuantity(cr.Memory, true), cr.PIDs, disk))
		out = append(out, cr)
	}
	return out
}

// inFlight reports whether the pod's eviction is under way.
func (st *State) inFlight(p Pod) bool {
	_, ok := st.flights[p.Candidate.UID]
	return ok || p.Terminating()
}

// credited returns a copy of the snapshot whose memory signals count the credited memory as available
// again, pid.available the credited threads and each disk signal its credited usage (each capped at
// capacity).
func credited(s signal.Snapshot, credits []Credit) signal.Snapshot {
	var mem, pids int64
	disk := map[signal.Signal]int64{}
	for _, c := range credits {
		mem += c.Memory
		pids += c.PIDs
		for _, d := range c.Disk {
			disk[d.Signal] += d.Amount
		}
	}
	if mem <= 0 && pids <= 0 && len(disk) == 0 {
		return s
	}
	out := s
	out.Observations = make(map[signal.Signal]signal.Observation, len(s.Observations))
	for sig, o := range s.Observations {
		switch {
		case sig.IsMemory():
			o.Available = min(o.Available+mem, o.Capacity)
		case sig == signal.PIDAvailable:
			o.Available = min(o.Available+pids, o.Capacity)
		case disk[sig] > 0:
			o.Available = min(o.Available+disk[sig], o.Capacity)
		}
		out.Observations[sig] = o
	}
	return out
}
