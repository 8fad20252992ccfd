package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Point is one sample of a series.
type Point struct {
	At time.Time `json:"at"`
	V  float64   `json:"v"`
}

// Series is one resource of one process over the run: "agent/<pod> rss", "janitor/<pod> goroutines",
// "node ledger bytes".
type Series struct {
	Name   string  `json:"name"`
	Points []Point `json:"points"`
	// Floor is the rise below which no trend counts (noise): bytes for RSS and the ledger, a count for
	// goroutines.
	Floor float64 `json:"floor"`
	// PlotOnly series are drawn but not judged by Flat (the ledger's size, which follows the eviction
	// rate by design: LedgerBounded judges the ledger).
	PlotOnly bool `json:"plotOnly,omitempty"`
}

// minFlatPoints is how many samples the second half needs for a verdict, and minFlatSpan how long it must
// last: a leak shows over minutes and hours, while a process's own warm-up (its first caches and GC
// cycles) rises for a minute or two, which is all the second half of a short run (the 3 episodes of
// make test) holds.
const (
	minFlatPoints = 6
	minFlatSpan   = 5 * time.Minute
)

// judged reports whether a second half is long enough for a verdict.
func judged(half []Point) bool {
	return len(half) >= minFlatPoints && half[len(half)-1].At.Sub(half[0].At) >= minFlatSpan
}

// Flat is invariant 7's first part: over the second half of each series (its samples after the
// midpoint of its first and last), the least-squares line must not rise by more than max(Floor, 10 %
// of the half's median). A series whose second half has fewer than minFlatPoints samples or lasts less
// than minFlatSpan gives no verdict (the report says which, see Verdictless).
func Flat(series []Series) []Violation {
	var out []Violation
	for _, s := range series {
		if s.PlotOnly {
			continue
		}
		half := secondHalf(s.Points)
		if !judged(half) {
			continue
		}
		rise := slope(half) * half[len(half)-1].At.Sub(half[0].At).Seconds()
		limit := max(s.Floor, 0.1*median(half))
		if rise > limit {
			out = append(out, Violation{InvFlat, fmt.Sprintf("%s rose by %.0f over the second half (%s, %d samples; allowed %.0f)",
				s.Name, rise, half[len(half)-1].At.Sub(half[0].At).Round(time.Second), len(half), limit)})
		}
	}
	return out
}

// Verdictless names the series Flat gives no verdict on: too few samples in their second half, or too
// short a one (PlotOnly series aside).
func Verdictless(series []Series) []string {
	var out []string
	for _, s := range series {
		if !s.PlotOnly && !judged(secondHalf(s.Points)) {
			out = append(out, s.Name)
		}
	}
	return out
}

func secondHalf(ps []Point) []Point {
	if len(ps) == 0 {
		return nil
	}
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b Point) int { return a.At.Compare(b.At) })
	mid := ps[0].At.Add(ps[len(ps)-1].At.Sub(ps[0].At) / 2)
	i, _ := slices.BinarySearchFunc(ps, mid, func(p Point, t time.Time) int { return p.At.Compare(t) })
	return ps[i:]
}

// slope is the least-squares slope of ps in units per second.
func slope(ps []Point) float64 {
	var sx, sy, sxx, sxy float64
	n := float64(len(ps))
	for _, p := range ps {
		x := p.At.Sub(ps[0].At).Seconds()
		sx, sy, sxx, sxy = sx+x, sy+p.V, sxx+x*x, sxy+x*p.V
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func median(ps []Point) float64 {
	vs := make([]float64, len(ps))
	for i, p := range ps {
		vs[i] = p.V
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// PodSample is one component pod as the API server showed it at one moment.
type PodSample struct {
	Component string `json:"component"` // "agent" or "janitor"
	UID       string `json:"uid"`
	Restarts  int32  `json:"restarts"` // the sum of its containers' restartCount
}

// CountRestarts counts each component's restarts over samples in time order: the rise of each pod's
// restart count, plus each pod that appeared after the first sample of its component beyond the
// replicas the component runs (a deleted pod replaced).
func CountRestarts(samples []PodSample, replicas map[string]int) map[string]int {
	first, last := map[string]int32{}, map[string]int32{}
	uids := map[string][]string{}
	for _, s := range samples {
		if _, ok := first[s.UID]; !ok {
			first[s.UID] = s.Restarts
			uids[s.Component] = append(uids[s.Component], s.UID)
		}
		last[s.UID] = max(last[s.UID], s.Restarts)
	}
	out := map[string]int{}
	for c, us := range uids {
		n := max(0, len(us)-replicas[c])
		for _, u := range us {
			n += int(last[u] - first[u])
		}
		out[c] = n
	}
	return out
}

// AllowedRestarts are the restarts the injected faults explain: deleting the agent pod or killing its
// process restarts the agent once; an API server outage may cost each janitor replica its lease, and
// a janitor that loses its lease exits (its container restarts). A kubelet or containerd restart
// explains none: the containers run on under their shims and the new kubelet adopts the pods, so an
// agent or janitor restart after one is a finding.
func AllowedRestarts(faults []FaultKind, janitorReplicas int) map[string]int {
	out := map[string]int{}
	for _, f := range faults {
		switch f {
		case FaultAgentPodDeleted, FaultAgentSIGKILL:
			out["agent"]++
		case FaultAPIServerStop:
			out["janitor"] += janitorReplicas
		}
	}
	return out
}

// NoUnexpectedRestarts is invariant 7's second part: no component restarted more than the injected
// faults allow.
func NoUnexpectedRestarts(restarts, allowed map[string]int) []Violation {
	var cs []string
	for c := range restarts {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	var out []Violation
	for _, c := range cs {
		if restarts[c] > allowed[c] {
			out = append(out, Violation{InvNoRestarts, fmt.Sprintf("the %s restarted %d times, the injected faults explain %d", c, restarts[c], allowed[c])})
		}
	}
	return out
}

// Names lists violations' invariant names, sorted, each once.
func Names(vs []Violation) string {
	var ns []string
	for _, v := range vs {
		if !slices.Contains(ns, v.Invariant) {
			ns = append(ns, v.Invariant)
		}
	}
	slices.Sort(ns)
	return strings.Join(ns, "; ")
}
