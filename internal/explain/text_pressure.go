package explain

import (
	"fmt"
	"strings"
)

// pressure prints what pressure-agent would do, next to the kubelet's section.
func (p *printer) pressure(ps *Pressure) {
	if ps == nil {
		return
	}
	p.section("PRESSURE-AGENT: what pressure-agent would do if the pressure persisted (policy " + ps.Policy + ")")
	p.prose("  ", "settings: ", ps.Settings)
	p.printf("\n")
	p.agentThresholds(ps.Thresholds)
	p.reclaim(ps.Reclaim)
	p.reclaimActions(ps.ReclaimActions)
	if len(ps.ThresholdsMet) > 0 {
		p.printf("\n")
		rows := [][]string{{"thresholds met:", strings.Join(ps.ThresholdsMet, ", ")},
			{"node conditions:", strings.Join(ps.NodeConditions, ", ")}}
		if ps.ActedOn != "" {
			rows = append(rows, []string{"acting on:", ps.ActedOn})
		}
		if t := ps.Target; t != nil {
			u := unitOfSignal(t.sig)
			why := t.GoalWhy
			if why == "" {
				why = "threshold + minimum reclaim"
			}
			line := fmt.Sprintf("%s back to %s (%s) from %s: %s needed, at most %d pods per sync",
				t.Signal, human(t.goal, u), why, human(t.available, u), human(t.need, u), t.MaxPods)
			if t.growth > 0 {
				line += fmt.Sprintf(", and no more once the pods taken grow %s/s (usage other than page cache: their eviction stops the fall)",
					human(t.growth, u))
			}
			rows = append(rows, []string{"target:", line})
		}
		p.table(rows)
	}
	p.credits(ps.Credits)
	p.agentVictims(ps)
	p.escalation(ps.Victims)
	if len(ps.Differences) > 0 {
		p.printf("\n  Where it differs from the kubelet:\n")
		for _, d := range ps.Differences {
			p.prose("    ", "- ", d)
		}
	}
	p.notes(ps.Notes)
}

func (p *printer) agentThresholds(ts []AgentThreshold) {
	if len(ts) == 0 {
		p.printf("  no eviction thresholds are configured\n")
		return
	}
	t := [][]string{{"KUBELET THRESHOLD", "KUBELET", "HEADROOM", "AGENT", "MIN RECLAIM", "FIRES ABOVE", "MET"}}
	for _, a := range ts {
		u := unitOfSignal(a.sig)
		row := []string{a.Kubelet, "-", dash(a.Headroom), "-", "-", "-", "no"}
		if !a.Hard {
			row[2] = "- (soft)"
		}
		if a.HeadroomWithheld != "" {
			row[2] = "0 (image GC)"
		}
		if a.Known {
			row[1], row[3], row[5] = human(a.kubeletV, u), human(a.resolvedV, u), human(mustInt(a.FiresAbove), u)
			if a.MinReclaim != "" {
				row[4] = human(a.reclaimV, u)
			}
		} else {
			row[1] = "no observation"
		}
		if a.Met {
			row[6] = "YES"
		}
		t = append(t, row)
	}
	p.table(t)
	for _, a := range ts {
		if a.HeadroomWithheld != "" {
			p.printf("  %s: no headroom: %s.\n", a.Kubelet, a.HeadroomWithheld)
		}
	}
}

func (p *printer) credits(cs []AgentCredit) {
	if len(cs) == 0 {
		return
	}
	p.printf("\n  In flight (not ranked, usage counted as available again):\n")
	for _, c := range cs {
		p.prose("    ", "- ", fmt.Sprintf("%s: %s (%s)", c.Pod, human(c.memory, unitBytes), c.Why))
	}
}

func (p *printer) agentVictims(ps *Pressure) {
	if len(ps.Walk) == 0 && len(ps.Victims) == 0 {
		return
	}
	unit := unitBytes
	if ps.Target != nil {
		unit = unitOfSignal(ps.Target.sig)
	}
	p.printf("\n")
	if len(ps.Walk) == 0 {
		t := [][]string{{"#", "POD", "RANK", "WHY"}}
		for i, v := range ps.Victims {
			t = append(t, []string{fmt.Sprint(i + 1), v.Pod, fmt.Sprint(v.Rank), v.Why})
		}
		p.table(t)
		return
	}
	t := [][]string{{"#", "POD", "RANK", "FREES", "ACTION"}}
	n := 0
	for _, w := range ps.Walk {
		num, action := "-", "skip: "+w.Reason
		if w.Action == "evict" {
			n++
			num, action = fmt.Sprint(n), "evict"
		}
		f := "unknown"
		if w.release.Known {
			f = human(w.release.Amount, unit)
		}
		t = append(t, []string{num, w.Pod, fmt.Sprint(w.Rank), f, action})
	}
	p.table(t)
}

// escalation prints, under the victims, what the agent does when a PodDisruptionBudget refuses (once
// per distinct answer) and what each eviction does to its workload's avoidance of the node.
func (p *printer) escalation(vs []AgentVictim) {
	seen := map[string]bool{}
	for _, v := range vs {
		if v.IfRefused != "" && !seen[v.IfRefused] {
			seen[v.IfRefused] = true
			p.prose("  ", "if a PodDisruptionBudget refuses: ", v.IfRefused)
		}
	}
	for _, v := range vs {
		if v.Avoidance != "" {
			p.prose("  ", v.Pod+": ", v.Avoidance)
		}
	}
}
