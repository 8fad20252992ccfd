package policy

import (
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// Reclaim is the estimate of what the kernel can reclaim of one scope's memory (the node, the pods
// cgroup or a pod) without swap: its page cache (active and inactive file pages) minus what is dirty or
// under writeback (it must be written first) and minus what was recently refaulted (cache the workload
// reads back as soon as it is dropped: reclaiming it only moves the stall). Anonymous memory and shmem
// are not reclaimable; they are not on the file lists, so nothing is subtracted for them.
type Reclaim struct {
	// File is active_file + inactive_file; Inactive is inactive_file (what the kubelet's working set
	// already leaves out).
	File, Inactive   int64
	Dirty, Writeback int64
	// Refaulted is the file memory refaulted within ReclaimConfig.RefaultWindow: the refault rate times
	// the window, at most File.
	Refaulted int64
	// Reclaimable is File − Dirty − Writeback − Refaulted, at least 0.
	Reclaimable int64
}

// EstimateReclaim is the pure estimate of one memory.stat and the scope's file refault rate (bytes/s,
// over the window). It reports false when a field it needs is absent (absent is not zero): the file
// sizes, dirty or writeback.
func EstimateReclaim(m *signal.MemoryStat, refaultRate float64, window time.Duration) (Reclaim, bool) {
	if !m.FileKnown() || m.Dirty == nil || m.Writeback == nil {
		return Reclaim{}, false
	}
	r := Reclaim{File: int64(*m.ActiveFile + *m.InactiveFile), Inactive: int64(*m.InactiveFile),
		Dirty: int64(*m.Dirty), Writeback: int64(*m.Writeback)}
	r.Refaulted = min(r.File, int64(refaultRate*window.Seconds()))
	r.Reclaimable = max(0, r.File-r.Dirty-r.Writeback-r.Refaulted)
	return r, true
}

// NonReclaimable returns what of a working set the kernel cannot reclaim: usage (working set +
// inactive_file) minus the reclaimable estimate, at least 0.
func (r Reclaim) NonReclaimable(workingSet int64) int64 {
	return max(0, workingSet+r.Inactive-r.Reclaimable)
}

// Gain is how much more is available on the non-reclaimable estimate than on the kubelet's working set
// (reclaimable − inactive_file): negative when more is dirty, under writeback or refaulting than is
// active.
func (r Reclaim) Gain() int64 { return r.Reclaimable - r.Inactive }

// counters is one sample of a scope's cumulative workingset counters.
type counters struct {
	at                 time.Time
	refault, activate  uint64
	refKnown, actKnown bool
	pageSize           uint64
}

// rateWindow holds two samples of a scope's counters: the rate runs from the older one, so it spans
// between half a window and a window (ReclaimConfig.RefaultWindow).
type rateWindow struct {
	old, cur counters
}

// rates are a scope's refault and activation rates, bytes/s.
type rates struct {
	refault, activate           float64
	refaultKnown, activateKnown bool
}

func sampleOf(m *signal.MemoryStat, at time.Time) counters {
	c := counters{at: at, pageSize: m.PageSize}
	if m.WorkingsetRefaultFile != nil {
		c.refault, c.refKnown = *m.WorkingsetRefaultFile, true
	}
	if m.WorkingsetActivateFile != nil {
		c.activate, c.actKnown = *m.WorkingsetActivateFile, true
	}
	return c
}

// observe adds a sample and returns the rates from the oldest sample at least minSpan before it. A
// counter that went down (the cgroup was recreated) restarts the window.
func (w rateWindow) observe(s counters, window, minSpan time.Duration) (rateWindow, rates) {
	base := w.old
	if base.at.IsZero() {
		base = w.cur
	}
	var r rates
	dt := s.at.Sub(base.at)
	if !base.at.IsZero() && dt >= minSpan && s.pageSize > 0 {
		if s.refKnown && base.refKnown && s.refault >= base.refault {
			r.refault, r.refaultKnown = float64((s.refault-base.refault)*s.pageSize)/dt.Seconds(), true
		}
		if s.actKnown && base.actKnown && s.activate >= base.activate {
			r.activate, r.activateKnown = float64((s.activate-base.activate)*s.pageSize)/dt.Seconds(), true
		}
	}
	reset := (s.refKnown && base.refKnown && s.refault < base.refault) || (s.actKnown && base.actKnown && s.activate < base.activate)
	switch {
	case w.cur.at.IsZero() || reset:
		w = rateWindow{cur: s}
	case s.at.Sub(w.cur.at) >= window/2:
		w = rateWindow{old: w.cur, cur: s}
	}
	return w, r
}
