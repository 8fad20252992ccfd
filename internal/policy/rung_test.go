package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
)

func TestReclaimTargets(t *testing.T) {
	est := func(ns, name string, reclaimable, inactive int64, rate float64) podReclaim {
		return podReclaim{ref: PodRef{UID: "uid-" + name, Namespace: ns, Name: name}, known: true, rate: rate, rateKnown: true,
			est: Reclaim{File: reclaimable, Inactive: inactive, Reclaimable: reclaimable}}
	}
	view := ReclaimView{Signal: signal.AllocatableMemoryAvailable, WorkingSet: 200 * mebibyte,
		Estimate: Reclaim{Reclaimable: 900 * mebibyte, Inactive: 50 * mebibyte}}
	type got struct {
		Targets []string
		Bytes   []int64
		Enough  bool
	}
	for _, tc := range []struct {
		name     string
		ests     []podReclaim
		maxBytes int64
		want     got
	}{
		{"largest reclaimable first, each asked for its inactive pages plus what is still needed",
			[]podReclaim{est("a", "small", 100*mebibyte, 10*mebibyte, 0), est("a", "big", 200*mebibyte, 20*mebibyte, 0)}, 2 << 30,
			got{[]string{"a/big", "a/small"}, []int64{200 * mebibyte, 86 * mebibyte}, true}}, // 256Mi needed: 180Mi + 76Mi
		{"equal reclaimable: by namespace, then name",
			[]podReclaim{est("b", "x", 300*mebibyte, 0, 0), est("a", "y", 300*mebibyte, 0, 0)}, 2 << 30,
			got{[]string{"a/y"}, []int64{256 * mebibyte}, true}},
		{"a thrashing pod is never a target", []podReclaim{est("a", "thrash", 900*mebibyte, 0, 2*mebibyte)}, 2 << 30,
			got{Enough: false}},
		{"maxBytes bounds the total: not enough", []podReclaim{est("a", "big", 900*mebibyte, 0, 0)}, 100 * mebibyte,
			got{[]string{"a/big"}, []int64{100 * mebibyte}, false}},
		{"no pod estimate: the pods cgroup", []podReclaim{{ref: PodRef{UID: "uid-x", Namespace: "a", Name: "x"}}}, 2 << 30,
			got{[]string{"the pods cgroup"}, []int64{306 * mebibyte}, true}},
		{"the known pods fall short and a new pod's estimate is unknown: the pods cgroup",
			[]podReclaim{est("a", "quiet", 10*mebibyte, 0, 0), {ref: PodRef{UID: "uid-reader", Namespace: "a", Name: "reader"}}}, 2 << 30,
			got{[]string{"the pods cgroup"}, []int64{306 * mebibyte}, true}},
		{"the known pods fall short beside a thrashing pod: no pods-cgroup reclaim that could hit the thrasher",
			[]podReclaim{est("a", "quiet", 10*mebibyte, 0, 0), est("a", "thrash", 900*mebibyte, 0, 2*mebibyte),
				{ref: PodRef{UID: "uid-reader", Namespace: "a", Name: "reader"}}}, 2 << 30,
			got{[]string{"a/quiet"}, []int64{10 * mebibyte}, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Reclaim.Action.MaxBytes = tc.maxBytes
			reqs, enough, _ := reclaimTargets(view, 456*mebibyte, tc.ests, cfg)
			g := got{Enough: enough}
			for _, q := range reqs {
				g.Targets, g.Bytes = append(g.Targets, q.Target()), append(g.Bytes, q.Bytes)
			}
			if d := cmp.Diff(g, tc.want); d != "" {
				t.Errorf("reclaimTargets (-got +want):\n%s", d)
			}
		})
	}
}
