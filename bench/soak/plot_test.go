package soak

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestPlotDrawsOneLinePerSeriesInValidSVG(t *testing.T) {
	in := []Series{
		series("agent/pressure-agent-x#0 rss bytes", 10, 1, func(i int) float64 { return float64(30+i) * (1 << 20) }),
		series("janitor/j-1#0 rss bytes", 10, 1, func(i int) float64 { return 20 << 20 }),
		series("agent/pressure-agent-x#0 goroutines", 10, 1, func(i int) float64 { return 40 }),
		series("node ledger bytes", 10, 1, func(i int) float64 { return 0 }),
	}
	var buf bytes.Buffer
	if err := Plot(&buf, in); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	lines := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not valid XML: %v\n%s", err, buf.String())
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != len(in) {
		t.Errorf("%d polylines, want %d", lines, len(in))
	}
	for _, name := range []string{"agent/pressure-agent-x#0", "janitor/j-1#0", "node"} {
		if !strings.Contains(buf.String(), ">"+name+"<") {
			t.Errorf("legend lacks %q", name)
		}
	}
	var again bytes.Buffer
	_ = Plot(&again, in)
	if again.String() != buf.String() {
		t.Error("Plot is not deterministic")
	}
}
