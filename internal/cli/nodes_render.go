package cli

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// renderNodes writes the nodes report: a table (text, or wide with more columns), or a NodeList in
// a machine format. A partial answer is also said on stderr, so that a table piped elsewhere does not
// hide it.
func renderNodes(streams genericiooptions.IOStreams, r NodesReport, output string) error {
	if !isText(output) {
		return printObject(streams.Out, KindNodeList, r, output)
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	head := []string{"NODE", "SIGNAL", "AVAILABLE", "THRESHOLD", "MARGIN", "OF CAPACITY", "TIME TO THRESHOLD"}
	if output == "wide" {
		head = append(head, "MET", "CONDITIONS", "ERROR")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	missing := 0
	for _, it := range r.Items {
		fmt.Fprintln(tw, strings.Join(nodeRow(it, output == "wide"), "\t"))
		if it.Error != "" {
			missing++
		}
	}
	_ = tw.Flush() // writes to a bytes.Buffer cannot fail
	if _, err := streams.Out.Write(buf.Bytes()); err != nil {
		return err
	}
	if r.Partial {
		_, err := fmt.Fprintf(streams.ErrOut, "partial: %d of %d nodes did not answer (see -o wide or -o json for why)\n",
			missing, len(r.Items))
		return err
	}
	return nil
}

func nodeRow(it NodeMargin, wide bool) []string {
	row := []string{it.Node, "-", "-", "-", "-", "-", dashIfEmpty(it.TimeToThreshold, "unknown")}
	switch {
	case it.Error != "":
		row[1], row[6] = "no answer", "-"
	case it.Tightest != nil:
		m := it.Tightest
		row[1], row[2], row[3], row[4] = m.Signal, m.Human.Available, m.Human.Resolved, m.Human.Margin
		row[5] = fmt.Sprintf("%.1f%%", m.PercentOfCapacity)
	default:
		row[1] = "no observation"
	}
	if wide {
		row = append(row, dashIfEmpty(strings.Join(it.ThresholdsMet, ","), "-"),
			dashIfEmpty(strings.Join(it.Conditions, ","), "-"), dashIfEmpty(it.Error, "-"))
	}
	return row
}

func dashIfEmpty(s, dash string) string {
	if s == "" {
		return dash
	}
	return s
}
