package explain

import (
	"sort"
	"time"
)

// Avoidance is one workload whose new pods the agent keeps off the node after an eviction (the
// pressure-agent's ledger, docs/agent.md "Eviction loops").
type Avoidance struct {
	// Workload is kind/namespace/name of the evicted pod's controller.
	Workload string    `json:"workload"`
	UID      string    `json:"uid"`
	Until    time.Time `json:"until"`
	// Loop reports an escalated avoidance (the workload was caught in an eviction loop).
	Loop bool `json:"loop,omitempty"`
}

// activeAvoidances returns the avoidances still in force at now, the soonest to end first (ties: by
// workload, then UID). A zero now keeps them all.
func activeAvoidances(as []Avoidance, now time.Time) []Avoidance {
	var out []Avoidance
	for _, a := range as {
		if now.IsZero() || now.Before(a.Until) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Until.Equal(b.Until) {
			return a.Until.Before(b.Until)
		}
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		return a.UID < b.UID
	})
	return out
}

// avoidances writes the avoidances section (nothing when there are none).
func (p *printer) avoidances(as []Avoidance, now time.Time) {
	if len(as) == 0 {
		return
	}
	p.section("AVOIDANCES (pressure-agent: new pods of these workloads are kept off this node)")
	rows := [][]string{{"WORKLOAD", "UNTIL", "LEFT", "WHY"}}
	for _, a := range as {
		why := "evicted here"
		if a.Loop {
			why = "eviction loop"
		}
		left := "-"
		if !now.IsZero() {
			left = a.Until.Sub(now).Round(time.Second).String()
		}
		rows = append(rows, []string{a.Workload, a.Until.UTC().Format(time.RFC3339), left, why})
	}
	p.table(rows)
}
