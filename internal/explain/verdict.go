package explain

import (
	"fmt"
	"strings"
)

// verdict is the report in one line, for the top of the text and Report.Verdict: whether the kubelet
// evicts (for what, and how far past which threshold), else whether pressure-agent would, else the
// tightest margin; a partial report says so.
func verdict(r Report) string {
	var b strings.Builder
	b.WriteString(r.Node + ": ")
	local := 0
	for _, v := range r.Kubelet.EvictionOrder {
		if v.Path == PathLocalStorage && !v.Critical {
			local++
		}
	}
	switch {
	case r.Kubelet.ActedOn != "":
		fmt.Fprintf(&b, "%s eviction by the kubelet in effect", r.Kubelet.ResourceToReclaim)
		if row, ok := actedOnRow(r.Signals, r.Kubelet.ActedOn); ok {
			u := unitOfSignal(row.sig)
			fmt.Fprintf(&b, "; %s %s below %s (%s available)", row.Signal, human(-row.margn, u), row.Threshold, human(row.avail, u))
		} else {
			fmt.Fprintf(&b, " (%s met)", r.Kubelet.ActedOn)
		}
	case local > 0:
		pods := "pods"
		if local == 1 {
			pods = "pod"
		}
		fmt.Fprintf(&b, "no threshold met, but the kubelet evicts %d %s over a local ephemeral-storage limit", local, pods)
	case r.Pressure != nil && r.Pressure.ActedOn != "":
		fmt.Fprintf(&b, "no kubelet threshold met; pressure-agent would evict (its %s is met)", r.Pressure.ActedOn)
	default:
		m, ok := TightestMargin(r)
		if !ok {
			b.WriteString("unknown: no threshold has an observation")
			break
		}
		fmt.Fprintf(&b, "no pressure; tightest margin %s above %s (%s of capacity)", m.Human.Margin, m.Threshold,
			percent(m.PercentOfCapacity))
	}
	if len(r.Unavailable) > 0 {
		b.WriteString(" (partial: see PARTIAL below)")
	}
	return b.String()
}

// actedOnRow finds the signal row of the threshold the kubelet acts on: the same threshold, or its
// statement with the grace period or minimum reclaim after it.
func actedOnRow(rows []SignalRow, actedOn string) (SignalRow, bool) {
	for _, row := range rows {
		if row.Observed && row.Threshold != "" && (actedOn == row.Threshold || strings.HasPrefix(actedOn, row.Threshold+" ")) {
			return row, true
		}
	}
	return SignalRow{}, false
}
