package soak

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Plot geometry: one panel per resource, stacked.
const (
	plotWidth   = 900
	panelHeight = 220
	plotLeft    = 70
	plotRight   = 20
	plotTop     = 30
	panelGap    = 50
)

var plotColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// plotPanels are the panels Plot draws: a title and the suffix of the series they hold, with the unit
// divisor of their values.
var plotPanels = []struct {
	title, suffix string
	div           float64
}{
	{"RSS (MiB)", " rss bytes", 1 << 20},
	{"goroutines", " goroutines", 1},
	{"ledger annotation (bytes)", " ledger bytes", 1},
}

// Plot writes an SVG of the run's series over time: one panel each for RSS, goroutines and the ledger's
// size, a line per series (per process: agent/<pod>#<restarts>), its name in the legend. Deterministic.
func Plot(w io.Writer, series []Series) error {
	var t0, t1 time.Time
	for _, s := range series {
		for _, p := range s.Points {
			if t0.IsZero() || p.At.Before(t0) {
				t0 = p.At
			}
			if p.At.After(t1) {
				t1 = p.At
			}
		}
	}
	span := max(t1.Sub(t0).Seconds(), 1)
	height := plotTop + len(plotPanels)*(panelHeight+panelGap)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", plotWidth, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotWidth, height)
	x := func(t time.Time) float64 {
		return plotLeft + t.Sub(t0).Seconds()/span*float64(plotWidth-plotLeft-plotRight)
	}
	for i, pn := range plotPanels {
		top := float64(plotTop + i*(panelHeight+panelGap))
		var in []Series
		ymax := 0.0
		for _, s := range series {
			if strings.HasSuffix(s.Name, pn.suffix) {
				in = append(in, s)
				for _, p := range s.Points {
					ymax = max(ymax, p.V/pn.div)
				}
			}
		}
		ymax = math.Max(1, math.Ceil(ymax*1.1))
		y := func(v float64) float64 { return top + panelHeight - v/pn.div/ymax*panelHeight }
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" font-weight="bold">%s</text>`+"\n", plotLeft, top-8, pn.title)
		fmt.Fprintf(&b, `<rect x="%d" y="%.0f" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", plotLeft, top, plotWidth-plotLeft-plotRight, panelHeight)
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">%.0f</text>`+"\n", plotLeft-4, top+4, ymax)
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">0</text>`+"\n", plotLeft-4, top+panelHeight)
		fmt.Fprintf(&b, `<text x="%d" y="%.0f">0</text><text x="%d" y="%.0f" text-anchor="end">%s</text>`+"\n",
			plotLeft, top+panelHeight+14, plotWidth-plotRight, top+panelHeight+14, time.Duration(span*float64(time.Second)).Round(time.Second))
		for j, s := range in {
			color := plotColors[j%len(plotColors)]
			var pts []string
			for _, p := range s.Points {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.At), y(p.V)))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.Join(pts, " "))
			fmt.Fprintf(&b, `<text x="%d" y="%.0f" fill="%s">%s</text>`+"\n", plotLeft+8, top+14+float64(j)*13, color,
				xmlEscape(strings.TrimSuffix(s.Name, pn.suffix)))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
