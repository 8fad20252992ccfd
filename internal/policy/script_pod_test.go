package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/rank/ranktest"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// pod adds or replaces a pod (ranktest.Pod's language, plus deleted=OFFSET: the deletion timestamp, and
// terminal=true: phase Failed or Succeeded, still listed).
func (m *machine) pod(args []string) error {
	var p Pod
	var ms signal.MemoryStat
	hasStat := false
	deleted := func(_ *rank.Candidate, k, v string) (bool, error) {
		if took, err := memStatArg(&ms, k, v); took {
			hasStat = true
			return true, err
		}
		if k == "terminal" {
			p.Terminal = v == "true"
			return true, nil
		}
		if k != "deleted" {
			return false, nil
		}
		var err error
		p.DeletionTimestamp, err = offset(v)
		return true, err
	}
	c, err := ranktest.Pod(args, deleted)
	if err != nil {
		return err
	}
	if hasStat && c.Stats != nil {
		c.Stats.Memory = &ms
	}
	p.Candidate = c
	for i := range m.pods {
		if m.pods[i].Candidate.Name == c.Name {
			m.pods[i] = p
			return nil
		}
	}
	m.pods = append(m.pods, p)
	return nil
}

func (m *machine) deletePod(args []string) error {
	for i, p := range m.pods {
		if p.Candidate.Name == args[0] {
			m.pods = append(m.pods[:i], m.pods[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("no pod %q", args[0])
}

// step runs one Step at t= with the observations stamped then, and prints the plan.
func (m *machine) step(args []string) (string, error) {
	in, err := m.input(args)
	if err != nil {
		return "", err
	}
	m.outcomes, m.reclaims = nil, nil
	var plan Plan
	m.state, plan = Step(m.state, in)
	return render(in.Now, plan), nil
}

// input builds the Input of a step command's arguments.
func (m *machine) input(args []string) (Input, error) {
	in := Input{Config: m.cfg, InFlight: m.ledger, Outcomes: m.outcomes, Reclaimable: m.reclaimable, Reclaims: m.reclaims,
		ReclaimUnavailable: m.unreclaimable}
	for _, a := range args {
		k, v := kv(a)
		var err error
		switch k {
		case "t":
			in.Now, err = offset(v)
		case "persisting":
			in.Persisting = true
		default:
			err = fmt.Errorf("unknown step argument %q", a)
		}
		if err != nil {
			return in, err
		}
	}
	kc, err := threshold.ParseConfig(m.kubelet)
	if err != nil {
		return in, err
	}
	in.Kubelet = kc
	in.Snapshot = signal.Snapshot{Observations: map[signal.Signal]signal.Observation{}, Pods: map[string]signal.PodStats{},
		Filesystems: m.layout}
	for sig, o := range m.obs {
		o.Time = in.Now
		in.Snapshot.Observations[sig] = o
	}
	m.reclaimInput(&in.Snapshot, in.Now)
	for _, p := range m.pods {
		if p.Candidate.Stats != nil {
			s := *p.Candidate.Stats
			s.Time = in.Now
			p.Candidate.Stats = &s
			in.Snapshot.Pods[p.Candidate.UID] = s
		}
		in.Pods = append(in.Pods, p)
	}
	return in, nil
}

// render prints the policy's trace and the plan; the core's own trace is left to decision's scenarios.
func render(now time.Time, p Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t=%s\n", now.Sub(t0))
	b.WriteString(p.Trace.String())
	fmt.Fprintf(&b, "=> conditions %v\n", p.Conditions)
	for _, v := range p.Reclaim {
		fmt.Fprintf(&b, "=> reclaim %s known=%t working-set=%s non-reclaimable=%s effective=%s confirmed=%t backstop=%t", v.Signal,
			v.Known, threshold.FormatAvailable(v.WorkingSet, v.Signal), threshold.FormatAvailable(v.NonReclaimable, v.Signal),
			threshold.FormatAvailable(v.Effective, v.Signal), v.Confirmed, v.Backstop)
		if v.Held {
			b.WriteString(" held=true")
		}
		b.WriteString("\n")
	}
	for _, q := range p.Reclaims {
		fmt.Fprintf(&b, "=> reclaim-action %s %s bytes=%s reclaimable=%s\n", q.Signal, q.Target(), threshold.FormatQuantity(q.Bytes, true),
			threshold.FormatQuantity(q.Reclaimable, true))
	}
	for _, q := range p.ReclaimAvoidable {
		fmt.Fprintf(&b, "=> would-reclaim %s %s bytes=%s\n", q.Signal, q.Target(), threshold.FormatQuantity(q.Bytes, true))
	}
	for _, c := range p.Credits {
		fmt.Fprintf(&b, "=> credit %s memory=%s threads=%d", c.Pod, threshold.FormatQuantity(c.Memory, true), c.PIDs)
		for _, d := range c.Disk {
			fmt.Fprintf(&b, " %s=%s", d.Signal, formatRelease(d.Signal, Release{Amount: d.Amount, Known: true}))
		}
		b.WriteString("\n")
	}
	for _, e := range p.Evictions {
		fmt.Fprintf(&b, "=> evict %s rank=%d frees=%s hard=%t grace=%d observed=%s threshold=%s", e.Ref(), e.Rank,
			formatRelease(e.Signal, e.Release), e.Hard, e.Grace.Override, e.ObservedText, e.ThresholdText)
		if !e.Crossing.IsZero() {
			fmt.Fprintf(&b, " crossing=%s", e.Crossing.Sub(t0))
		}
		b.WriteString("\n")
	}
	for _, d := range p.Deferred {
		fmt.Fprintf(&b, "=> defer %s: %s", d.Pod, d.Reason)
		if !d.Until.IsZero() {
			fmt.Fprintf(&b, " until %s", d.Until.Sub(t0))
		}
		b.WriteString("\n")
	}
	for _, k := range p.Kills {
		fmt.Fprintf(&b, "=> kill %s eta=%s\n", k.Pod, k.ETA)
	}
	for _, e := range p.NodeEvents {
		fmt.Fprintf(&b, "=> event %s %s observed=%s", e.Kind, e.Signal, e.Observed)
		if e.Limit != "" {
			fmt.Fprintf(&b, " threshold=%s", e.Limit)
		}
		b.WriteString("\n")
	}
	if !p.APIBackoffUntil.IsZero() {
		fmt.Fprintf(&b, "=> api backoff until %s\n", p.APIBackoffUntil.Sub(t0))
	}
	fmt.Fprintf(&b, "=> taint want=%t value=%s\n", p.Taint.Want, p.Taint.Value)
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "=> warning %s\n", w)
	}
	return b.String()
}
