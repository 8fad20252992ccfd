package policy

import (
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
)

// State is what the policy remembers between steps. The zero State is the state at start-up. It is a
// value: Step copies what it changes and never modifies the State it is given, so a caller may keep
// an old State and step from it again (the simulator's what-if, explain's prediction).
type State struct {
	// decision is the core's state (grace timers, conditions, the stale-stats guard).
	decision decision.State
	// layout is the filesystem layout the containerfs thresholds were derived from (nil until the
	// first observed snapshot).
	layout *signal.FilesystemLayout
	// last holds the latest observation of every signal (trend and crossing estimates).
	last map[signal.Signal]signal.Observation
	// falls holds each memory signal's fall over the interval that ended at the last step (the
	// eviction lead: lead.go).
	falls map[signal.Signal]fall
	// pressure holds the signals under pressure at the last step (raw snapshot, min-reclaim hysteresis).
	pressure map[signal.Signal]bool
	// crossing holds the estimated crossing of each signal's episode not yet reported by an eviction.
	crossing map[signal.Signal]time.Time
	// episode is the pressure episode the node events reported (nil when none).
	episode *episode
	// lastPressure is the last step under pressure, taintValue the episode's signal (the taint's value).
	lastPressure time.Time
	taintValue   string
	// flights are the pods whose eviction (or kill) is under way, by UID.
	flights map[string]flight
	// refused holds the PodDisruptionBudget refusals still in their pause, by UID.
	refused map[string]refusal
	// tokens are the eviction requests of the last minute, oldest first.
	tokens []token
	// backoff is the API backoff.
	backoff backoff
	// windows are the refault rate windows of policy ReclaimAware, by scope ("node", "pods", pod UID).
	windows map[string]rateWindow
	// restarted is when the node and pods windows last restarted because a pod in flight left (zero:
	// never): for a window after it, PSI still covers the time the pod ran.
	restarted time.Time
	// wsLast is each memory signal's recent raw observations (the working set): the backstop's trend.
	wsLast map[signal.Signal]wsTrend
	// nfLast is each memory signal's available amount were no file page charged (the working set's
	// available amount plus the active file pages), and podNF each pod's usage other than file pages (its
	// working set less its active file pages), by UID: the growth that is not page cache (growth.go).
	nfLast map[signal.Signal]wsTrend
	podNF  map[string]wsTrend
	// podsAt is when the last step recorded the pods' non-file usage (zero: never).
	podsAt time.Time
	// nfQuiet is, by pod UID, until when a pod's non-file samples are not its growth: a reclaim of its
	// cgroup ended shortly before (growth.go, quietReclaimed); nfQuietAll the same for every pod, after a
	// reclaim of the pods cgroup.
	nfQuiet    map[string]time.Time
	nfQuietAll time.Time
	// rungs are the reclaims of the reclaim rung still settling or spent, by signal; lastReclaim is when
	// each signal's last reclaim was planned (the rate bound), reclaimFrom the working set then.
	rungs       map[signal.Signal]rung
	lastReclaim map[signal.Signal]time.Time
	reclaimFrom map[signal.Signal]int64
}

// episode is a pressure episode as the node events report it.
type episode struct {
	signal    signal.Signal
	threshold string
}

// flight is one pod whose eviction or kill is under way. The credit bounds are what the pod used when
// the flight started: its credit is never more.
type flight struct {
	since time.Time
	// memory and pids are the credit bounds (bytes, threads); memKnown and pidKnown say whether the pod
	// was measured then.
	memory, pids       int64
	memKnown, pidKnown bool
	// disk is the bound of each disk signal the pod's usage was measured for (bytes, or inodes for the
	// inode signals), as rank.DiskUsage measures it; never written after the flight starts.
	disk map[signal.Signal]int64
	// evicting and killing are set while an eviction or a kill planned by the policy is pending or
	// carried out; observed is set for a flight the policy adopted (a terminating pod, a ledger entry).
	evicting, killing, observed bool
	// hard is the threshold kind of the planned eviction (a refusal remembers it).
	hard bool
	// origin says why the pod is in flight, for the trace.
	origin string
	// seen is the pod's memory credit at the last step that measured it, with the memory signals then
	// (raw, not the reclaim view): the credit once its stats are gone (see State.credit).
	seen seenMemory
}

// seenMemory is a flight's memory credit at the last step its pod had memory stats (measured, at), what
// is left of it after the steps since (credit: it only falls), and the available amount of each raw
// memory signal at the last step.
type seenMemory struct {
	known             bool
	at                time.Time
	measured, credit  int64
	alloc, node       int64
	hasAlloc, hasNode bool
}

// refusal is a PodDisruptionBudget refusal: when, and whether the request was for a hard threshold.
type refusal struct {
	at   time.Time
	hard bool
}

// token is one eviction request inside the minute window.
type token struct {
	at  time.Time
	uid string
}

// backoff is an exponential backoff between Config.APIBackoffMin and APIBackoffMax.
type backoff struct {
	cur   time.Duration
	until time.Time
}

// Decision returns the core's state (grace timers, reported conditions, last observations).
func (s State) Decision() decision.State { return s.decision }

// clone returns a copy whose maps and slices can be changed without touching s.
func (s State) clone() State {
	out := s
	out.last = copyMap(s.last)
	out.falls = copyMap(s.falls)
	out.pressure = copyMap(s.pressure)
	out.crossing = copyMap(s.crossing)
	out.flights = copyMap(s.flights)
	out.refused = copyMap(s.refused)
	out.tokens = append([]token(nil), s.tokens...)
	out.windows = copyMap(s.windows)
	out.wsLast = copyMap(s.wsLast)
	out.nfLast = copyMap(s.nfLast)
	out.podNF = copyMap(s.podNF)
	out.nfQuiet = copyMap(s.nfQuiet)
	out.lastReclaim = copyMap(s.lastReclaim)
	out.reclaimFrom = copyMap(s.reclaimFrom)
	out.rungs = make(map[signal.Signal]rung, len(s.rungs))
	for k, r := range s.rungs {
		r.uids = copyMap(r.uids)
		out.rungs[k] = r
	}
	if s.layout != nil {
		l := *s.layout
		out.layout = &l
	}
	if s.episode != nil {
		e := *s.episode
		out.episode = &e
	}
	return out
}

func copyMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
