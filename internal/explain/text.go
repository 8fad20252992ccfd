package explain

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Text writes the report for people: sections with headings, aligned columns, human-readable
// quantities.
func Text(w io.Writer, r Report) error {
	return TextWith(w, r, TextOptions{})
}

func (p *printer) report(r Report) {
	p.header(r)
	p.unavailable(r.Unavailable)
	p.warnings(r.Warnings)
	p.allocatable(r.AllocatableMath)
	p.firings(r.Thresholds)
	p.signals(r.Signals, r.Now)
	p.conditions(r.NodeConditions)
	p.avoidances(r.Avoidances, r.Now)
	p.kubelet(r.Kubelet)
	p.pressure(r.Pressure)
}

// printer accumulates the first write error.
type printer struct {
	w    io.Writer
	opts TextOptions
	err  error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// table writes rows of tab-separated cells, indented by two spaces and aligned.
func (p *printer) table(rows [][]string) {
	if p.err != nil {
		return
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintf(tw, "  %s\n", strings.Join(row, "\t")) // writes to a bytes.Buffer cannot fail
	}
	_ = tw.Flush()
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			p.printf("%s\n", strings.TrimRight(line, " \n"))
		}
	}
}

func (p *printer) section(title string) { p.printf("\n%s\n", p.paint(ansiBold, title)) }

func (p *printer) header(r Report) {
	if r.Verdict != "" {
		p.printf("%s\n", p.paint(ansiBold, r.Verdict))
	}
	p.printf("Node %s", r.Node)
	if r.Source != "" {
		p.printf(" (%s)", r.Source)
	}
	if !r.Now.IsZero() {
		p.printf(", stats ages as of %s", r.Now.UTC().Format(time.RFC3339))
	}
	p.printf("\n")
}

func (p *printer) unavailable(us []string) {
	if len(us) == 0 {
		return
	}
	p.printf("\n%s\n", p.paint(ansiRed, "PARTIAL: not everything could be read"))
	for _, u := range us {
		p.prose("  ", "", u)
	}
}

func (p *printer) warnings(ws []string) {
	if len(ws) == 0 {
		return
	}
	p.section("WARNINGS")
	for _, w := range ws {
		p.printf("  %s", p.paint(ansiYellow, "WARNING:"))
		p.prose("", " ", w)
	}
}

func (p *printer) allocatable(rows []Allocation) {
	p.section("ALLOCATABLE: capacity − kube-reserved − system-reserved − hard eviction threshold = allocatable")
	if len(rows) == 0 {
		p.printf("  no node capacity known\n")
		return
	}
	t := [][]string{{"RESOURCE", "CAPACITY", "KUBE-RESERVED", "SYSTEM-RESERVED", "HARD-EVICTION", "ALLOCATABLE", "OF CAPACITY"}}
	var extra []string
	for _, a := range rows {
		ra, u := a.res, unitOfResource(a.Resource)
		if ra.Capacity == 0 && ra.Allocatable == 0 {
			continue // e.g. hugepages-1Gi on a node without any: noise in text, kept in JSON
		}
		hard := human(ra.HardEviction, u)
		if a.HardEvictionThreshold != "" {
			hard += " (" + a.HardEvictionThreshold + ")"
		}
		t = append(t, []string{a.Resource, human(ra.Capacity, u), human(ra.KubeReserved, u), human(ra.SystemReserved, u),
			hard, human(ra.Allocatable, u), percent(a.PercentOfCapacity)})
		if ra.HugePages != 0 {
			extra = append(extra, fmt.Sprintf("%s allocatable also excludes %s of hugepages", a.Resource, human(ra.HugePages, u)))
		}
		if a.PodsCgroupLimit != "" {
			extra = append(extra, fmt.Sprintf("pods cgroup memory limit (enforceNodeAllocatable: pods) = capacity − "+
				"kube-reserved − system-reserved = %s; allocatableMemory.available watches it", human(ra.PodsCgroupLimit, u)))
		}
	}
	p.table(t)
	for _, e := range extra {
		p.printf("  %s\n", e)
	}
}

func (p *printer) firings(fs []Firing) {
	p.section("WHEN EVICTION STARTS")
	if len(fs) == 0 {
		p.printf("  no eviction thresholds are configured: the kubelet never evicts for node pressure\n")
	}
	for _, f := range fs {
		p.prose("  ", "", f.Explanation)
	}
}

func (p *printer) signals(rows []SignalRow, now time.Time) {
	p.section("SIGNALS NOW")
	t := [][]string{{"SIGNAL", "THRESHOLD", "AVAILABLE", "CAPACITY", "RESOLVED", "MARGIN", "MET", "STATS AGE"}}
	for _, r := range rows {
		u := unitOfSignal(r.sig)
		row := []string{r.Signal, dash(r.Threshold), "no observation", "-", "-", "-", "no", "-"}
		if r.Observed {
			row[2] = human(r.avail, u)
			row[3] = human(mustInt(r.Capacity), u)
			if r.Resolved != "" {
				row[4], row[5] = human(mustInt(r.Resolved), u), human(r.margn, u)
			}
			if r.StatsAgeSeconds != nil {
				row[7] = age(time.Duration(*r.StatsAgeSeconds * float64(time.Second)))
			}
		}
		if r.Met {
			row[6] = "YES"
		}
		t = append(t, row)
	}
	p.table(t)
}

func (p *printer) conditions(cs []NodeCondition) {
	p.section("NODE CONDITIONS (as the node reports them)")
	if len(cs) == 0 {
		p.printf("  none reported\n")
		return
	}
	t := [][]string{{"TYPE", "STATUS", "REASON", "SINCE"}}
	for _, c := range cs {
		since := "-"
		if !c.Since.IsZero() {
			since = c.Since.UTC().Format(time.RFC3339)
		}
		t = append(t, []string{c.Type, c.Status, dash(c.Reason), since})
	}
	p.table(t)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func mustInt(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}
