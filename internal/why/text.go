package why

import (
	"fmt"
	"io"
	"strings"
)

// Text writes the verdict for people.
func Text(w io.Writer, v Verdict) error {
	var b strings.Builder
	gone := ""
	if v.PodGone {
		gone = " (gone)"
	}
	fmt.Fprintf(&b, "POD        %s/%s%s uid %s node %s\n", v.Namespace, v.Pod, gone, orDash(v.UID), orDash(v.Node))
	fmt.Fprintf(&b, "VERDICT    %s (confidence %s)\n", v.Cause, v.Confidence)
	fmt.Fprintf(&b, "           %s\n", v.Summary)
	if v.At != nil {
		fmt.Fprintf(&b, "WHEN       %s\n", stamp(*v.At))
	}
	if len(v.Evidence) > 0 {
		b.WriteString("\nEVIDENCE\n")
		for _, f := range v.Evidence {
			fmt.Fprintf(&b, "  - %s:\n      %s\n", f.Source, f.Detail)
		}
	}
	if d := v.Eviction; d != nil {
		writeEviction(&b, d)
	}
	list(&b, "NOTES", v.Notes)
	list(&b, "PROBLEMS", v.Problems)
	if v.Cause == CauseUnknown || v.Confidence == Low {
		list(&b, "CHECKED", v.Checked)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeEviction(b *strings.Builder, d *Eviction) {
	b.WriteString("\nEVICTION\n")
	fmt.Fprintf(b, "  by %s, resource %s", d.By, orDash(d.Resource))
	if d.Signal != "" {
		fmt.Fprintf(b, ", signal %s", d.Signal)
	}
	if d.Rung != "" {
		fmt.Fprintf(b, ", via %s", d.Rung)
	}
	b.WriteString("\n")
	if d.Threshold != "" || d.Available != "" {
		fmt.Fprintf(b, "  threshold %s, available %s (from the message)\n", orDash(d.Threshold), orDash(d.Available))
	}
	if d.Rank > 0 {
		fmt.Fprintf(b, "  the agent ranked it %d", d.Rank)
		if d.DecidedBy != "" {
			fmt.Fprintf(b, ", decided by %s", d.DecidedBy)
		}
		b.WriteString("\n")
	}
	for _, c := range d.Containers {
		fmt.Fprintf(b, "  container %s was using %s, request %s\n", c.Name, c.Usage, c.Request)
	}
	if len(d.ConfiguredThresholds) > 0 {
		fmt.Fprintf(b, "  kubelet thresholds: %s (%s)\n", strings.Join(d.ConfiguredThresholds, ", "), d.ConfigSource)
	}
	if a := d.Allocatable; a != nil {
		fmt.Fprintf(b, "  allocatable %s: capacity %s − kube-reserved %s − system-reserved %s − hard eviction %s = %s; pods cgroup limit %s\n",
			a.Resource, a.Capacity, a.KubeReserved, a.SystemReserved, a.HardEviction, a.Allocatable, a.PodsCgroupLimit)
	}
	if r := d.Ranking; r != nil {
		fmt.Fprintf(b, "  ranking re-run (%s): evicted pod comes %d of %d", r.Basis, r.Position, len(r.Order))
		if r.Why != "" {
			fmt.Fprintf(b, ", %s", r.Why)
		}
		b.WriteString("\n")
		for i, p := range r.Order {
			mark := " "
			if p.Evicted {
				mark = "*"
			}
			fmt.Fprintf(b, "   %s%d. %-40s %-10s priority %-6d usage %-9s request %-9s %s\n", mark, i+1, p.Pod, p.QOSClass,
				p.Priority, p.Usage, p.Request, p.DecidedBy)
		}
	}
	list(b, "  MISSING", d.Missing)
	list(b, "  WOULD HAVE PREVENTED IT", d.Prevention)
}

func list(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", title)
	indent := strings.Repeat(" ", len(title)-len(strings.TrimLeft(title, " ")))
	for _, s := range items {
		fmt.Fprintf(b, "%s  - %s\n", indent, s)
	}
}
