package explain

import (
	"strconv"
	"testing"

	"github.com/kube-pressure/pressure/internal/signal"
)

func TestVerdictSaysWhoEvictsOrTheTightestMargin(t *testing.T) {
	mem := func(avail int64, met bool) SignalRow {
		return SignalRow{Signal: "memory.available", Threshold: "memory.available<100Mi", Observed: true,
			Available: itoa(avail), Capacity: itoa(16 << 30), Resolved: itoa(100 << 20), Margin: itoa(avail - 100<<20), Met: met,
			sig: signal.MemoryAvailable, avail: avail, margn: avail - 100<<20}
	}
	for _, tc := range []struct {
		name string
		r    Report
		want string
	}{
		{"the kubelet evicts", Report{Node: "n", Signals: []SignalRow{mem(50<<20, true)},
			Kubelet: Kubelet{ActedOn: "memory.available<100Mi", ResourceToReclaim: "memory"}},
			"n: memory eviction by the kubelet in effect; memory.available 50Mi below memory.available<100Mi (50Mi available)"},
		{"local-storage evictions without a threshold met", Report{Node: "n", Signals: []SignalRow{mem(8<<30, false)},
			Kubelet: Kubelet{EvictionOrder: []Victim{{Path: PathLocalStorage}, {Path: PathLocalStorage, Critical: true}}}},
			"n: no threshold met, but the kubelet evicts 1 pod over a local ephemeral-storage limit"},
		{"pressure-agent alone", Report{Node: "n", Signals: []SignalRow{mem(300<<20, false)},
			Pressure: &Pressure{ActedOn: "memory.available<356Mi minReclaim=100Mi"}},
			"n: no kubelet threshold met; pressure-agent would evict (its memory.available<356Mi minReclaim=100Mi is met)"},
		{"no pressure", Report{Node: "n", Signals: []SignalRow{mem(8<<30, false)}},
			"n: no pressure; tightest margin 7.9Gi above memory.available<100Mi (49.4% of capacity)"},
		{"nothing observed, partial", Report{Node: "n", Unavailable: []string{"GET summary: no answer"}},
			"n: unknown: no threshold has an observation (partial: see PARTIAL below)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := verdict(tc.r); got != tc.want {
				t.Errorf("verdict\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
