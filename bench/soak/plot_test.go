package soak

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestPlotDrawsOneLinePerSeriesInValidSVGWithALegendOfRoles(t *testing.T) {
	in := []Series{
		series("agent/pressure-agent-x#0 rss bytes", 10, 1, func(i int) float64 { return float64(30+i) * (1 << 20) }),
		series("agent/pressure-agent-y#0 rss bytes", 10, 1, func(i int) float64 { return float64(31+i) * (1 << 20) }),
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
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "path" {
			lines++
		}
	}
	if lines != len(in) {
		t.Errorf("%d paths, want %d", lines, len(in))
	}
	for _, name := range []string{"agent (2 processes)", "janitor", "node", "agent"} {
		if !strings.Contains(buf.String(), ">"+name+"<") {
			t.Errorf("legend lacks %q", name)
		}
	}
	for _, name := range []string{"agent/pressure-agent-x#0", "agent/pressure-agent-y#0", "janitor/j-1#0"} {
		if !strings.Contains(buf.String(), "<title>"+name+"</title>") {
			t.Errorf("no line is titled %q", name)
		}
	}
	var again bytes.Buffer
	_ = Plot(&again, in)
	if again.String() != buf.String() {
		t.Error("Plot is not deterministic")
	}
}

func TestPlotRole(t *testing.T) {
	for name, want := range map[string]string{
		"agent/pressure-agent-4j9qb#0":                        "agent",
		"janitor/pressure-janitor-86f765d69f-2j5sm#1 leader":  "janitor leader",
		"janitor/pressure-janitor-86f765d69f-2j5sm#0 standby": "janitor standby",
		"node": "node",
	} {
		if got := plotRole(name); got != want {
			t.Errorf("plotRole(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestPlotBreaksALineWhereItsSeriesHasNoPointsForAWhile(t *testing.T) {
	s := Series{Name: "janitor/j-1#0 standby goroutines"}
	for _, sec := range []int{0, 3, 6, 90, 93} {
		s.Points = append(s.Points, Point{At: at(sec), V: 12})
	}
	var buf bytes.Buffer
	if err := Plot(&buf, []Series{s}); err != nil {
		t.Fatal(err)
	}
	i := strings.Index(buf.String(), ` d="`)
	if i < 0 {
		t.Fatalf("no path:\n%s", buf.String())
	}
	d := buf.String()[i+4:]
	d = d[:strings.Index(d, `"`)]
	if got := strings.Count(d, "M"); got != 2 {
		t.Errorf("path %q has %d moves, want 2: one at the start and one after the 84 s without points", d, got)
	}
}
