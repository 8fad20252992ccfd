package sim

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Text writes the result as a timeline table per run, then the differences and the notes.
func Text(w io.Writer, res Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Simulated node %s from %s, seed %d: %s to %s (%s)\n", res.Node, res.Source, res.Seed,
		res.Start.UTC().Format(time.RFC3339), res.End.UTC().Format(time.RFC3339), res.End.Sub(res.Start))
	fmt.Fprintf(&b, "Kubelet: %s\n", res.Kubelet)
	for _, run := range res.Runs {
		fmt.Fprintf(&b, "\nRUN %s: %s\n", run.Name, run.Title)
		writeEvents(&b, run.Events)
		fmt.Fprintf(&b, "  %s\n", summaryLine(run.Summary))
	}
	if len(res.Recorded) > 0 {
		b.WriteString("\nRECORDED: the evictions in the recording (the kubelet's at their DisruptionTarget time, pressure-agent's at its ledger's)\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tTIME\tBY\tPOD\tMESSAGE")
		for _, r := range res.Recorded {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", r.Order, FormatOffset(time.Duration(r.Offset)), r.By, r.Pod, orDash(r.Message))
		}
		tw.Flush()
	}
	writeDifferences(&b, res)
	if len(res.Notes) > 0 {
		b.WriteString("\nNOTES\n")
		for _, n := range res.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeEvents(b *strings.Builder, events []Event) {
	if len(events) == 0 {
		b.WriteString("  nothing happened\n")
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tACTOR\tEVENT\tSUBJECT\tDETAIL")
	for _, e := range events {
		subject := e.Subject
		if e.Eviction != nil && e.Eviction.Order > 0 {
			subject = fmt.Sprintf("#%d %s", e.Eviction.Order, subject)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", FormatOffset(time.Duration(e.Offset)), e.Actor, e.Kind, subject, e.Detail)
	}
	tw.Flush()
}

func summaryLine(s Summary) string {
	var parts []string
	switch {
	case s.Evictions == 0:
		parts = append(parts, "no eviction")
	default:
		parts = append(parts, fmt.Sprintf("%d evictions (kubelet %d, pressure-agent %d), the first at %s", s.Evictions,
			s.ByKubelet, s.ByAgent, FormatOffset(time.Duration(*s.FirstEviction))))
	}
	for _, sig := range []string{"memory.available", "allocatableMemory.available"} {
		if v, ok := s.MinAvailable[sig]; ok {
			parts = append(parts, fmt.Sprintf("lowest %s %s (below the kubelet's hard threshold for %s)", sig, v, s.BelowThreshold[sig]))
		}
	}
	parts = append(parts, fmt.Sprintf("MemoryPressure for %s", time.Duration(s.MemoryPressure)))
	return "summary: " + strings.Join(parts, "; ")
}

func writeDifferences(b *strings.Builder, res Result) {
	b.WriteString("\nDIFFERENCES: when each pod was evicted, and by whom\n")
	if len(res.Differences) == 0 {
		b.WriteString("  no pod was evicted\n")
		return
	}
	agent := len(res.Runs) > 1
	rec := len(res.Recorded) > 0
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	head := "  POD\tKUBELET ALONE"
	if agent {
		head += "\tWITH PRESSURE-AGENT"
	}
	if rec {
		head += "\tRECORDED"
	}
	fmt.Fprintln(tw, head)
	for _, d := range res.Differences {
		line := "  " + d.Pod + "\t" + outcome(d.Kubelet, false)
		if agent {
			line += "\t" + outcome(d.Agent, true)
		}
		if rec {
			line += "\t" + outcome(d.Recorded, false)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

func outcome(o *Outcome, by bool) string {
	if o == nil {
		return "not evicted"
	}
	s := fmt.Sprintf("#%d %s", o.Order, FormatOffset(time.Duration(o.Offset)))
	if by {
		s += " by " + string(o.By)
	}
	return s
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
