package policy

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// The eviction lead: a threshold is a level, and a ramp fast enough reaches zero available before the
// victim of an eviction at that level is dead (the kubelet stops its containers 0.4 to 1.3 s after the
// request on the test node). The kernel's OOM killer then kills first. So, for policies Pressure and
// ReclaimAware, a hard memory threshold whose signal would reach zero within Config.EvictionLead at its
// fall is raised to just above the available amount: the step acts as at a crossing (evicting what a
// crossing evicts: the first-ranked pods up to the minimum reclaim), by the time to exhaustion and not
// only by the level. Raising it to the level the fall uses up in the lead would also raise the amount to
// free, and evict more pods than the one that ramps.
//
// Guards against acting on a burst: the fall must have lasted two steps in a row (each interval at most
// maxLeadInterval long, the slower of the two rates counts), no pod's memory may be in flight (a
// victim still growing while it dies would otherwise make the next pod look like a ramp), and, for
// ReclaimAware, no reclaim of the signal may be settling: the pages the agent just reclaimed are read
// back, their refaults lower the estimate at once, and that step is not a ramp of usage (the rung holds
// eviction off while it settles, unless the working set falls below the kubelet's own threshold).

const mebibyte = 1 << 20

// maxLeadInterval is the longest interval between two steps whose fall counts as a rate.
const maxLeadInterval = 2 * time.Second

// fall is a memory signal's fall over the interval that ended at a step: bytes per second (0 when it did
// not fall, or the interval was too long to say) and when the interval ended.
type fall struct {
	rate int64
	at   time.Time
}

// falls returns each memory signal's fall from the last step's observation to snap's.
func (st *State) fallsNow(snap signal.Snapshot) map[signal.Signal]fall {
	out := map[signal.Signal]fall{}
	for sig, o := range snap.Observations {
		if !sig.IsMemory() {
			continue
		}
		prev, ok := st.last[sig]
		dt := o.Time.Sub(prev.Time)
		f := fall{at: o.Time}
		if ok && !prev.Time.IsZero() && dt > 0 && dt <= maxLeadInterval && o.Available < prev.Available {
			f.rate = int64(float64(prev.Available-o.Available) / dt.Seconds())
		}
		out[sig] = f
	}
	return out
}

// leadRaise raises the hard memory thresholds of ths by the eviction lead (see above) and traces each
// raise; now are this step's falls (fallsNow), st.falls the last step's. It returns ths unchanged for
// policy Kubelet, without a lead, or while a pod's memory is in flight.
func (st *State) leadRaise(at time.Time, ths threshold.Config, snap signal.Snapshot, now map[signal.Signal]fall, cfg Config, p *Plan) threshold.Config {
	if cfg.Policy == Kubelet || cfg.EvictionLead <= 0 {
		return ths
	}
	out, copied := ths, false
	for i, t := range ths.Thresholds {
		if !t.IsHard() || !t.Signal.IsMemory() || t.Inert() {
			continue
		}
		o, ok := snap.Observations[t.Signal]
		cur, last := now[t.Signal], st.falls[t.Signal]
		if !ok || cur.rate <= 0 || last.rate <= 0 || !last.at.Before(cur.at) {
			continue
		}
		rate := min(cur.rate, last.rate)
		level := int64(float64(rate) * cfg.EvictionLead.Seconds())
		base := t.Value.Resolve(o.Capacity)
		if o.Available < base || o.Available >= level {
			continue // under the threshold already, or not exhausted within the lead
		}
		if last, ok := st.settling(t.Signal, at, cfg); ok {
			p.tr().add(KindLead, string(t.Signal), fmt.Sprintf("falls %s/s: not raised while the reclaim at %s settles (until %s)",
				threshold.FormatHuman(rate, true), stamp(last), stamp(last.Add(cfg.Reclaim.Action.Settle))))
			continue
		}
		if uid := st.memoryInFlight(); uid != "" {
			p.tr().add(KindLead, string(t.Signal), fmt.Sprintf("falls %s/s: not raised while pod %s's memory is in flight",
				threshold.FormatHuman(rate, true), uid))
			continue
		}
		if !copied {
			out.Thresholds = append([]threshold.Threshold(nil), ths.Thresholds...)
			copied = true
		}
		raised := (o.Available/mebibyte + 1) * mebibyte // the next whole MiB above it: readable in the trace
		t.Value = threshold.Value{Quantity: resource.NewQuantity(raised, resource.BinarySI)}
		out.Thresholds[i] = t
		p.Leads = append(p.Leads, Lead{Signal: t.Signal, Rate: rate, Raised: raised - base,
			Why: fmt.Sprintf("time to exhaustion: falls %s/s, reaches zero in %s, within the eviction lead %s",
				threshold.FormatHuman(rate, true), exhaustion(o.Available, rate), cfg.EvictionLead)})
		p.tr().add(KindLead, string(t.Signal), fmt.Sprintf("falls %s/s over the last two steps: %s available reaches zero in %s, "+
			"within the eviction lead %s: acting now, as if at the threshold (raised from %s to just above the available amount)",
			threshold.FormatHuman(rate, true), threshold.FormatHuman(o.Available, true), exhaustion(o.Available, rate),
			cfg.EvictionLead, threshold.FormatQuantity(base, true)))
	}
	return out
}

// exhaustion is the time a fall at rate bytes per second takes to use up available, rounded.
func exhaustion(available, rate int64) time.Duration {
	if available <= 0 {
		return 0
	}
	return time.Duration(float64(available) / float64(rate) * float64(time.Second)).Round(time.Millisecond)
}

// memoryInFlight returns the smallest UID of a flight with a memory credit bound, "" when there is none.
func (st *State) memoryInFlight() string {
	out := ""
	for uid, f := range st.flights {
		if f.memKnown && (out == "" || uid < out) {
			out = uid
		}
	}
	return out
}

// settling returns when sig's last reclaim (of the reclaim rung) was planned, while that is less than
// ReclaimAction.Settle ago: its pages may still be read back, whether or not the rung is done with it.
func (st *State) settling(sig signal.Signal, at time.Time, cfg Config) (time.Time, bool) {
	if cfg.Policy != ReclaimAware {
		return time.Time{}, false
	}
	last, ok := st.lastReclaim[sig]
	if !ok || !at.Before(last.Add(cfg.Reclaim.Action.Settle)) {
		return time.Time{}, false
	}
	return last, true
}
