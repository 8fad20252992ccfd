package soak

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
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

// plotGap is the longest time between two points of a series drawn as joined (five of the sampler's 3 s
// periods): a janitor standby that led for a while has no standby points meanwhile, and a line across
// that time would read as a trend.
const plotGap = 15 * time.Second

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
// size, a line per series (per process: agent/<pod>#<restarts>, janitor/<pod>#<n> leader|standby),
// coloured by its role (plotRole), and above each panel a legend of the roles with how many processes
// each had (a run of 100 episodes has dozens: a line each in the legend covered the panel). Deterministic.
func Plot(w io.Writer, series []Series) error {
	t0, t1 := plotSpan(series)
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
		roles := plotRoles(in, pn.suffix)
		for _, s := range in {
			var d []string
			for k, p := range s.Points {
				cmd := "L"
				if k == 0 || p.At.Sub(s.Points[k-1].At) > plotGap {
					cmd = "M"
				}
				d = append(d, fmt.Sprintf("%s%.1f,%.1f", cmd, x(p.At), y(p.V)))
			}
			name := strings.TrimSuffix(s.Name, pn.suffix)
			fmt.Fprintf(&b, `<path fill="none" stroke="%s" stroke-width="1.5" d="%s"><title>%s</title></path>`+"\n",
				roles[plotRole(name)].color, strings.Join(d, " "), xmlEscape(name))
		}
		legendX := plotWidth - plotRight
		for _, r := range slices.Backward(slices.SortedFunc(maps.Values(roles), func(a, b plotRoleInfo) int { return a.order - b.order })) {
			fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end" fill="%s">%s</text>`+"\n", legendX, top-8, r.color, xmlEscape(r.label()))
			legendX -= 10 + 7*len(r.label())
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plotSpan is the first and last time of any point.
func plotSpan(series []Series) (t0, t1 time.Time) {
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
	return t0, t1
}

// plotRole is a series' role: "agent", "janitor leader", "janitor standby", or its whole name (the
// node's ledger).
func plotRole(name string) string {
	kind, rest, ok := strings.Cut(name, "/")
	if !ok {
		return name
	}
	if _, role, ok := strings.Cut(rest, " "); ok {
		return kind + " " + role
	}
	return kind
}

// plotRoleInfo is one role of a panel: its colour, its place in the legend and how many series it has.
type plotRoleInfo struct {
	name  string
	color string
	order int
	n     int
}

func (r plotRoleInfo) label() string {
	if r.n == 1 {
		return r.name
	}
	return fmt.Sprintf("%s (%d processes)", r.name, r.n)
}

// plotRoles gives the roles of a panel's series, coloured in the order of their names.
func plotRoles(in []Series, suffix string) map[string]plotRoleInfo {
	roles := map[string]plotRoleInfo{}
	for _, s := range in {
		r := plotRole(strings.TrimSuffix(s.Name, suffix))
		info := roles[r]
		info.name, info.n = r, info.n+1
		roles[r] = info
	}
	for i, name := range slices.Sorted(maps.Keys(roles)) {
		info := roles[name]
		info.color, info.order = plotColors[i%len(plotColors)], i
		roles[name] = info
	}
	return roles
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
