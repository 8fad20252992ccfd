package explain

import (
	"fmt"
	"github.com/kube-pressure/pressure/internal/decision"
	"strings"
	"time"
)

func (p *printer) kubelet(k Kubelet) {
	p.section("KUBELET: what the " + semanticsWords(k.Semantics) + " would do if the pressure persisted")
	local, ranked := splitLocal(k.EvictionOrder)
	if len(k.ThresholdsMet) == 0 && len(local) == 0 {
		p.notes(k.Notes)
		return
	}
	var rows [][]string
	if len(local) > 0 {
		rows = append(rows, []string{"local storage:", localHeader(local)})
	}
	if len(k.ThresholdsMet) == 0 {
		rows = append(rows, []string{"thresholds met:", "none"})
	} else {
		rows = append(rows, [][]string{
			{"thresholds met:", strings.Join(k.ThresholdsMet, ", ")},
			{"node conditions:", strings.Join(k.NodeConditions, ", ")},
			{"resource to reclaim:", k.ResourceToReclaim + " (acting on " + k.ActedOn + ")"},
			{"ranking keys:", strings.Join(k.Ranking, ", ")},
		}...)
	}
	p.table(rows)
	p.localOrder(local)
	if len(ranked) > 0 {
		p.printf("\n")
		if len(local) > 0 {
			p.printf("  Then the threshold ranking of the other pods:\n")
		}
		p.order(k, ranked, len(local))
	}
	p.whys(k.EvictionOrder)
	p.localMessages(local)
	p.firstVictim(ranked, len(local) > 0)
	p.notes(k.Notes)
}

func (p *printer) order(k Kubelet, vs []Victim, n int) {
	t := [][]string{{"#", "POD", "QOS", "PRIORITY", "USAGE", "REQUEST", "USAGE−REQUEST", "STATS AGE", "BEFORE NEXT BY", "NOTE"}}
	for _, v := range vs {
		num, note := "-", ""
		if v.Critical {
			note = "critical, never evicted (" + v.CriticalReason + ")"
			if v.LocalStorage != nil {
				note += "; over its " + v.LocalStorage.words()
			}
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

func (p *printer) firstVictim(vs []Victim, afterLocal bool) {
	for _, v := range vs {
		if v.Critical {
			continue
		}
		first := "First victim"
		if afterLocal {
			first = "Then first by the ranking"
		}
		p.printf("\n  %s: %s, grace period %ds. The kubelet's message (pod status and Evicted event):\n    %q\n",
			first, v.Pod, v.GracePeriodSeconds, v.Message)
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

// semanticsWords names the kubelet whose semantics the prediction follows: "kubelet v1.37 (node
// reports v1.37.2)"; just "kubelet v1.37" (the pinned release) when no version is known and no gate
// is on.
func semanticsWords(s decision.Semantics) string {
	out := fmt.Sprintf("kubelet v1.%d", s.MinorOrDefault())
	var extra []string
	if s.Version != "" {
		extra = append(extra, "node reports "+s.Version)
	}
	if on := s.Gates.On(); len(on) > 0 {
		extra = append(extra, "gates on: "+strings.Join(on, ", "))
	}
	if len(extra) > 0 {
		out += " (" + strings.Join(extra, "; ") + ")"
	}
	return out
}
