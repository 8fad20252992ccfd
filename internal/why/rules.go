package why

import (
	"fmt"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/evidence"
)

// Components and reasons the rules recognise (the agent's are checked against internal/actuate's
// constants in internal/cli's tests; the janitor's are internal/evidence's).
const (
	ComponentKubelet   = "kubelet"
	ComponentAgent     = "pressure-agent"
	ReasonAgentEvicted = "PressureEviction"
	ReasonEvicted      = "Evicted"
	ReasonSystemOOM    = "SystemOOM"
	ReasonKilling      = "Killing"
	ReasonUnhealthy    = "Unhealthy"
	ReasonPreempted    = "Preempted"
	ReasonCtrlDelete   = "SuccessfulDelete"
	rejectedPrefix     = "Pod was rejected: "
)

// oomWindow is how far from a container's termination a SystemOOM Event still counts as its cause.
const oomWindow = time.Minute

func eventSource(e Event) string {
	return fmt.Sprintf("Event %s %s on %s/%s from %s at %s", e.Type, e.Reason, e.Kind, e.Object, orDash(e.Source), stamp(e.Last))
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func agentEviction(v *Verdict, ev Evidence) bool {
	evs := find(ev.Events, func(e Event) bool { return e.Reason == ReasonAgentEvicted && e.Source == ComponentAgent })
	if len(evs) == 0 && len(ev.Ledger) == 0 {
		return false
	}
	var at time.Time
	conf := Medium
	if len(evs) > 0 {
		v.add(eventSource(evs[0]), evs[0].Message)
		at, conf = evs[0].Last, High
	}
	for _, l := range ev.Ledger {
		settled := "not settled (pod still listed)"
		if l.SettledAt != nil {
			settled = "settled " + stamp(*l.SettledAt)
		}
		v.add("ledger annotation pressure.kube-pressure.io/ledger on node "+v.Node,
			fmt.Sprintf("evicted at %s for %s via %s, %s", stamp(l.At), orDash(l.Signal), orDash(l.Rung), settled))
		if at.IsZero() {
			at = l.At
		}
	}
	addDisruption(v, ev)
	v.Eviction = agentDetail(evs, ev)
	v.set(CauseAgentEviction, conf, fmt.Sprintf("evicted by pressure-agent for %s pressure", orDash(v.Eviction.Signal)), at)
	if len(evs) == 0 {
		v.note("the agent's PressureEviction Event is gone (Events expire after the API server's --event-ttl, 1h by default): the verdict rests on the ledger")
	}
	completeEviction(v, ev)
	return true
}

func kubeletEviction(v *Verdict, ev Evidence) bool {
	p := ev.Pod
	evs := find(ev.Events, func(e Event) bool { return e.Reason == ReasonEvicted && e.Source == ComponentKubelet })
	dt, hasDT := condition(p, "DisruptionTarget")
	byStatus := p != nil && p.Reason == ReasonEvicted
	byJanitor := ev.Janitor != nil && ev.Janitor.Reason == ReasonEvicted
	verifiedJanitor := byJanitor && ev.Janitor.Verified
	byDT := hasDT && dt.Reason == "TerminationByKubelet" && !strings.Contains(strings.ToLower(dt.Message), "shutdown")
	if !byStatus && len(evs) == 0 && !byJanitor && !byDT {
		return false
	}
	msg, at := "", time.Time{}
	if byStatus {
		v.add("pod status", fmt.Sprintf("phase %s, reason %s, message %q", p.Phase, p.Reason, strings.TrimSpace(p.Message)))
		msg = p.Message
	}
	if hasDT {
		v.add("pod condition DisruptionTarget", fmt.Sprintf("reason %s at %s: %s", dt.Reason, stamp(dt.At), dt.Message))
		at = dt.At
	}
	if len(evs) > 0 {
		e := evs[0]
		v.add(eventSource(e), e.Message+annotationText(e.Annotations))
		msg = firstNonEmpty(msg, e.Message)
		if at.IsZero() {
			at = e.Last
		}
	}
	if byJanitor {
		j := ev.Janitor
		on := j.Owner
		if on == "" {
			on = "the pod itself (bare pod)"
		}
		v.add(j.janitorLabel(" (pressure-janitor evidence on "+on+")"),
			fmt.Sprintf("pod %s deleted after it ended %s/%s at %s (%s), qos %s, requests %s, limits %s: %q",
				j.Pod, j.Phase, j.Reason, stamp(j.EvictedAt), j.EvictedAtSource, orDash(j.QOS),
				orDash(evidence.ListText(j.Requests)), orDash(evidence.ListText(j.Limits)), j.Message))
		msg = firstNonEmpty(msg, j.Message)
		if at.IsZero() {
			at = j.EvictedAt
		}
	}
	if strings.HasPrefix(msg, rejectedPrefix) {
		v.set(CauseKubeletRejection, High, "rejected by the kubelet at admission: "+strings.TrimSpace(msg), at)
		return true
	}
	conf := High
	if !byStatus && len(evs) == 0 && !verifiedJanitor {
		conf = Medium
	}
	v.Eviction = kubeletDetail(msg, evs)
	v.set(CauseKubeletEviction, conf, fmt.Sprintf("evicted by the kubelet for node %s pressure", orDash(v.Eviction.Resource)), at)
	addNodePressure(v, ev, at)
	completeEviction(v, ev)
	return true
}

func nodeShutdown(v *Verdict, ev Evidence) bool {
	p := ev.Pod
	if p == nil {
		return false
	}
	dt, hasDT := condition(p, "DisruptionTarget")
	shut := strings.Contains(strings.ToLower(p.Message), "node shutdown") || p.Reason == "NodeShutdown" ||
		(hasDT && strings.Contains(strings.ToLower(dt.Message), "shutdown"))
	if !shut {
		return false
	}
	v.add("pod status", fmt.Sprintf("phase %s, reason %s, message %q", p.Phase, p.Reason, p.Message))
	if hasDT {
		v.add("pod condition DisruptionTarget", fmt.Sprintf("reason %s at %s: %s", dt.Reason, stamp(dt.At), dt.Message))
	}
	v.set(CauseNodeShutdown, High, "terminated by the kubelet because its node was shutting down", dt.At)
	return true
}

func preempted(v *Verdict, ev Evidence) bool {
	dt, hasDT := condition(ev.Pod, "DisruptionTarget")
	evs := find(ev.Events, func(e Event) bool { return e.Reason == ReasonPreempted })
	if !(hasDT && dt.Reason == "PreemptionByScheduler") && len(evs) == 0 {
		return false
	}
	at := dt.At
	if hasDT {
		v.add("pod condition DisruptionTarget", fmt.Sprintf("reason %s at %s: %s", dt.Reason, stamp(dt.At), dt.Message))
	}
	if len(evs) > 0 {
		v.add(eventSource(evs[0]), evs[0].Message)
		if at.IsZero() {
			at = evs[0].Last
		}
	}
	v.set(CausePreempted, High, "preempted by the scheduler to make room for a pod of higher priority", at)
	return true
}

func apiEviction(v *Verdict, ev Evidence) bool {
	dt, ok := condition(ev.Pod, "DisruptionTarget")
	if !ok || dt.Reason != "EvictionByEvictionAPI" {
		return false
	}
	v.add("pod condition DisruptionTarget", fmt.Sprintf("reason %s at %s: %s", dt.Reason, stamp(dt.At), dt.Message))
	v.set(CauseEvictionAPI, High, "evicted through the Eviction API by a client (kubectl drain, a descheduler, an autoscaler): "+
		"no PressureEviction Event or ledger entry names pressure-agent", dt.At)
	return true
}

// addDisruption adds the DisruptionTarget condition as evidence when present.
func addDisruption(v *Verdict, ev Evidence) {
	if dt, ok := condition(ev.Pod, "DisruptionTarget"); ok {
		v.add("pod condition DisruptionTarget", fmt.Sprintf("reason %s at %s: %s", dt.Reason, stamp(dt.At), dt.Message))
	}
}

// addNodePressure adds the kubelet's node pressure Events near at.
func addNodePressure(v *Verdict, ev Evidence, at time.Time) {
	evs := find(ev.NodeEvents, func(e Event) bool {
		switch e.Reason {
		case "NodeHasInsufficientMemory", "NodeHasDiskPressure", "NodeHasInsufficientPID", "EvictionThresholdMet":
			return at.IsZero() || near(e, at, 5*time.Minute)
		}
		return false
	})
	for _, e := range evs {
		v.add(eventSource(e), e.Message)
	}
}

func near(e Event, at time.Time, d time.Duration) bool {
	lo, hi := e.First, e.Last
	if lo.IsZero() {
		lo = hi
	}
	return !at.Before(lo.Add(-d)) && !at.After(hi.Add(d))
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func annotationText(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	return " [annotations " + evidence.ListText(m) + "]"
}
