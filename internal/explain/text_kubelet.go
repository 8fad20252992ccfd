package explain

import (
	"fmt"
	"strings"
	"time"
)

func (p *printer) kubelet(k Kubelet) {
	p.section("KUBELET: what the kubelet v1.36 would do if the pressure persisted")
	if len(k.ThresholdsMet) == 0 {
		p.notes(k.Notes)
		return
	}
	p.table([][]string{
		{"thresholds met:", strings.Join(k.ThresholdsMet, ", ")},
		{"node conditions:", strings.Join(k.NodeConditions, ", ")},
		{"resource to reclaim:", k.ResourceToReclaim + " (acting on " + k.ActedOn + ")"},
		{"ranking keys:", strings.Join(k.Ranking, ", ")},
	})
	if len(k.EvictionOrder) > 0 {
		p.printf("\n")
		p.order(k)
		p.whys(k.EvictionOrder)
		p.firstVictim(k.EvictionOrder)
	}
	p.notes(k.Notes)
}

func (p *printer) order(k Kubelet) {
	t := [][]string{{"#", "POD", "QOS", "PRIORITY", "USAGE", "REQUEST", "USAGE−REQUEST", "STATS AGE", "BEFORE NEXT BY", "NOTE"}}
	n := 0
	for _, v := range k.EvictionOrder {
		num, note := "-", ""
		if v.Critical {
			note = "critical, never evicted (" + v.CriticalReason + ")"
		} else {
			n++
			num = fmt.Sprint(n)
		}
		usage, req, above, statsAge := "no stats", "-", "-", "-"
		if v.HasStats {
			usage = human(v.vals.Usage, k.usageUnit)
			if v.Request != "" {
				req, above = human(v.vals.Request, k.usageUnit), human(v.vals.Score, k.usageUnit)
			}
		}
		if v.StatsAgeSeconds != nil {
			statsAge = age(time.Duration(*v.StatsAgeSeconds * float64(time.Second)))
		}
		t = append(t, []string{num, v.Pod, v.QOSClass, fmt.Sprint(v.Priority), usage, req, above, statsAge,
			dash(v.DecidedBy), note})
	}
	p.table(t)
}

func (p *printer) whys(vs []Victim) {
	if len(vs) < 2 {
		return
	}
	p.printf("\n  Why this order:\n")
	for i := 0; i+1 < len(vs); i++ {
		p.prose("    ", vs[i].Pod+" before "+vs[i+1].Pod+": ", vs[i].Why)
	}
}

func (p *printer) firstVictim(vs []Victim) {
	for _, v := range vs {
		if v.Critical {
			continue
		}
		p.printf("\n  First victim: %s, grace period %ds. The kubelet's message (pod status and Evicted event):\n    %q\n",
			v.Pod, v.GracePeriodSeconds, v.Message)
		return
	}
}

func (p *printer) notes(ns []string) {
	if len(ns) == 0 {
		return
	}
	p.printf("\n  Notes:\n")
	for _, n := range ns {
		p.prose("    ", "- ", n)
	}
}

// pressure prints the section on pressure's own policy; nothing until that policy exists.
func (p *printer) pressure(ps *Pressure) {
	if ps == nil {
		return
	}
	p.section("PRESSURE: where pressure's agent policy differs from the kubelet")
	if len(ps.Differences) == 0 {
		p.printf("  no differences\n")
	}
	for _, d := range ps.Differences {
		p.printf("  - %s\n", d)
	}
}
