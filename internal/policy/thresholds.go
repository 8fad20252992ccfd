package policy

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// kubeletThresholds returns the kubelet's configuration with the containerfs thresholds derived from
// the filesystem layout of the first observed snapshot, as the kubelet does on its first synchronize.
// The layout is remembered in the State; a derivation error is a warning and leaves them underived.
func (st *State) kubeletThresholds(kc threshold.Config, layout signal.FilesystemLayout, p *Plan) threshold.Config {
	if st.layout == nil {
		l := layout
		st.layout = &l
	}
	ts, err := threshold.UpdateContainerFsThresholds(kc.Thresholds, st.layout.DedicatedImageFs, st.layout.SplitContainerFs)
	if err != nil {
		p.Warnings = append(p.Warnings, "containerfs thresholds: "+err.Error())
		return kc
	}
	kc.Thresholds = ts
	return kc
}

// thresholdsFor returns the thresholds the policy acts on for this snapshot, and for Pressure the
// headroom of every hard threshold that has one.
func thresholdsFor(name Name, kc threshold.Config, snap signal.Snapshot, layout signal.FilesystemLayout, h Headroom) (threshold.Config, []HeadroomNote) {
	if name == Kubelet {
		return kc, nil
	}
	return pressureThresholds(kc, snap, layout, h)
}

// pressureThresholds returns the Pressure policy's thresholds for the observed capacities: every hard
// threshold of the kubelet resolved against its signal's capacity and raised by the headroom, soft
// thresholds unchanged, and a default minimum reclaim on byte thresholds without one. On a filesystem
// that holds images the headroom is withheld where the raised threshold would reach the kubelet's
// image GC start (imageGCHighThresholdPercent): there the kubelet frees space by deleting unused
// images, not pods, and the agent acts at the kubelet's own threshold. Thresholds of unobserved signals
// are kept as configured (they are never met). The result has the same length and order as
// kc.Thresholds, so the core's State stays valid from one step to the next.
func pressureThresholds(kc threshold.Config, snap signal.Snapshot, layout signal.FilesystemLayout, h Headroom) (threshold.Config, []HeadroomNote) {
	out := kc
	out.Thresholds = make([]threshold.Threshold, len(kc.Thresholds))
	var notes []HeadroomNote
	for i, t := range kc.Thresholds {
		var n *HeadroomNote
		out.Thresholds[i], n = raise(t, snap, layout, h, kc.ImageGCHigh())
		if n != nil {
			n.Threshold = decision.ThresholdID(i)
			notes = append(notes, *n)
		}
	}
	return out, notes
}

func raise(t threshold.Threshold, snap signal.Snapshot, layout signal.FilesystemLayout, h Headroom, gcHigh int32) (threshold.Threshold, *HeadroomNote) {
	o, ok := snap.Observations[t.Signal]
	if t.Inert() || !ok {
		return t, nil
	}
	var note *HeadroomNote
	if t.IsHard() {
		base := t.Value.Resolve(o.Capacity)
		add := h.amount(t.Signal, o.Capacity)
		if add > 0 {
			note = &HeadroomNote{Signal: t.Signal, Amount: add}
			if mark, ok := imageGCStart(t.Signal, layout, o.Capacity, gcHigh); ok && base+add >= mark {
				note.Amount, note.Withheld = 0, fmt.Sprintf("the raised threshold %s would reach the kubelet's image GC start "+
					"(%d%% used: %s available), where unused images are deleted, not pods",
					threshold.FormatHuman(base+add, t.Signal.Bytes()), gcHigh, threshold.FormatHuman(mark, t.Signal.Bytes()))
				add = 0
			}
		}
		t.Value = threshold.Value{Quantity: quantity(base+add, t.Signal)}
	}
	if t.MinReclaim == nil && t.Signal.Bytes() {
		t.MinReclaim = &threshold.Value{Quantity: quantity(DefaultMinReclaimBytes, t.Signal)}
	}
	return t, note
}

// imageGCStart returns the available amount below which the kubelet's image GC deletes unused images
// from sig's filesystem ((100 − imageGCHighThresholdPercent)% of capacity), and whether sig's
// filesystem holds images at all (imagefs; nodefs without a dedicated imagefs; containerfs unless the
// writable layers are split from the images) and image GC is on (the high mark below 100). Inode
// signals have no such mark: the image GC starts on bytes.
func imageGCStart(sig signal.Signal, l signal.FilesystemLayout, capacity int64, high int32) (int64, bool) {
	var holds bool
	switch sig { // bytes only: the image GC starts on the bytes used, never on inodes
	case signal.ImageFsAvailable:
		holds = true
	case signal.NodeFsAvailable:
		holds = !l.DedicatedImageFs
	case signal.ContainerFsAvailable:
		holds = !(l.DedicatedImageFs && l.SplitContainerFs)
	}
	if !holds || high >= 100 {
		return 0, false
	}
	return int64(float64(capacity) * float64(100-high) / 100), true
}

// amount returns the headroom for a signal with the given capacity.
func (h Headroom) amount(sig signal.Signal, capacity int64) int64 {
	v, ok := h[sig]
	if !ok {
		return 0
	}
	if v.IsPercentage() {
		return int64(float64(capacity) * float64(v.Percentage))
	}
	return v.Quantity.Value()
}

func quantity(v int64, sig signal.Signal) *resource.Quantity {
	f := resource.DecimalSI
	if sig.Bytes() {
		f = resource.BinarySI
	}
	return resource.NewQuantity(v, f)
}

// watches returns, per observed signal, the highest resolved threshold (the one crossed first), by
// signal; ties go to the lower threshold ID.
func watches(cfg threshold.Config, obs map[signal.Signal]signal.Observation) []Watch {
	best := map[signal.Signal]Watch{}
	for i, t := range cfg.Thresholds {
		o, ok := obs[t.Signal]
		if t.Inert() || !ok {
			continue
		}
		w := Watch{Signal: t.Signal, Threshold: decision.ThresholdID(i), Value: t.Value.Resolve(o.Capacity), Capacity: o.Capacity}
		if cur, seen := best[t.Signal]; !seen || w.Value > cur.Value {
			best[t.Signal] = w
		}
	}
	out := make([]Watch, 0, len(best))
	for _, w := range best {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Signal < out[j].Signal })
	return out
}

// describe formats the available amount of threshold id's signal and the resolved threshold.
func describe(cfg threshold.Config, id decision.ThresholdID, obs map[signal.Signal]signal.Observation) (string, string) {
	t := cfg.Thresholds[id]
	o := obs[t.Signal]
	return threshold.FormatAvailable(o.Available, t.Signal), threshold.FormatThreshold(t.Value, o.Capacity)
}

func idString(cfg threshold.Config, id decision.ThresholdID) string {
	return fmt.Sprintf("#%d %s", int(id), cfg.Thresholds[id])
}
