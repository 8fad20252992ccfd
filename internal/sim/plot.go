package sim

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Plot geometry.
const (
	plotWidth   = 1000
	panelHeight = 280
	marginLeft  = 80
	marginRight = 30
	marginTop   = 80
	panelGap    = 70
	maxPoints   = 1500
)

// runColors are the colours of the runs' lines and of the recording's; actorColors of the actors'
// thresholds and eviction markers.
var (
	runColors   = map[string]string{RunKubelet: "#1f77b4", RunAgent: "#2ca02c", "recorded": "#7f7f7f"}
	actorColors = map[Actor]string{ActorKubelet: "#d62728", ActorAgent: "#ff7f0e"}
)

// Plot writes an SVG plot of the result: per memory signal, its available amount over time in each
// run (and in the recording), the kubelet's and the agent's thresholds, and a marker at every
// eviction labelled with the pod. The SVG is generated here, deterministically.
func Plot(w io.Writer, res Result) error {
	panels := plotPanels(res)
	listTop := marginTop + len(panels)*(panelHeight+panelGap)
	height := listTop + 20 + 16*maxEvictions(res)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, height, plotWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", marginLeft,
		esc(fmt.Sprintf("%s: %s, %s", res.Node, res.Source, res.End.Sub(res.Start))))
	legend(&b, res)
	for i, p := range panels {
		p.draw(&b, res, marginTop+i*(panelHeight+panelGap))
	}
	evictionList(&b, res, listTop)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel is one memory signal.
type panel struct {
	signal string
	series []series
	lines  []ThresholdLine
	ymax   int64
}

type series struct {
	name   string
	points []point
}

type point struct {
	at time.Time
	v  int64
}

func plotPanels(res Result) []panel {
	var out []panel
	for _, sig := range []string{"memory.available", "allocatableMemory.available"} {
		p := panel{signal: sig}
		for _, run := range res.Runs {
			if s := pick(run.samples, sig); len(s) > 0 {
				p.series = append(p.series, series{name: run.Name, points: s})
			}
		}
		if s := pick(res.world, sig); len(s) > 0 && len(res.Recorded) > 0 {
			p.series = append(p.series, series{name: "recorded", points: s})
		}
		if len(p.series) == 0 {
			continue
		}
		for _, l := range append(append([]ThresholdLine{}, res.Thresholds...), res.AgentThresholds...) {
			if l.Signal == sig {
				p.lines = append(p.lines, l)
			}
		}
		for _, s := range p.series {
			for _, x := range s.points {
				p.ymax = max(p.ymax, x.v)
			}
		}
		for _, l := range p.lines {
			p.ymax = max(p.ymax, l.Bytes)
		}
		out = append(out, p)
	}
	return out
}

// pick returns one signal of the samples, reduced to at most maxPoints by keeping each bucket's
// minimum and maximum in time order.
func pick(samples []sample, sig string) []point {
	var all []point
	for _, s := range samples {
		switch {
		case sig == "memory.available":
			all = append(all, point{s.at, s.node})
		case s.hasPods:
			all = append(all, point{s.at, s.pod})
		}
	}
	if len(all) <= maxPoints {
		return all
	}
	per := (len(all) + maxPoints/2 - 1) / (maxPoints / 2)
	var out []point
	for i := 0; i < len(all); i += per {
		lo, hi := i, i
		for j := i; j < min(i+per, len(all)); j++ {
			if all[j].v < all[lo].v {
				lo = j
			}
			if all[j].v > all[hi].v {
				hi = j
			}
		}
		first, second := min(lo, hi), max(lo, hi)
		out = append(out, all[first])
		if second != first {
			out = append(out, all[second])
		}
	}
	return out
}

func (p panel) draw(b *strings.Builder, res Result, top int) {
	span := res.End.Sub(res.Start)
	x := func(t time.Time) float64 {
		if span <= 0 {
			return marginLeft
		}
		return marginLeft + float64(t.Sub(res.Start))/float64(span)*float64(plotWidth-marginLeft-marginRight)
	}
	ytop := niceCeil(float64(p.ymax)*1.05/(1<<20)) * (1 << 20)
	y := func(v int64) float64 { return float64(top) + float64(panelHeight)*(1-float64(v)/ytop) }
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s (MiB)</text>`+"\n", marginLeft, top-8, esc(p.signal))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", marginLeft, top,
		plotWidth-marginLeft-marginRight, panelHeight)
	axes(b, res, top, ytop, x, y)
	for _, l := range p.lines {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-dasharray="6,4"/>`+"\n",
			marginLeft, y(l.Bytes), plotWidth-marginRight, y(l.Bytes), actorColors[l.Actor])
		fmt.Fprintf(b, `<text x="%d" y="%.1f" fill="%s" text-anchor="end">%s %s</text>`+"\n", plotWidth-marginRight-4,
			y(l.Bytes)-4, actorColors[l.Actor], esc(string(l.Actor)), esc(l.Threshold))
	}
	for _, s := range p.series {
		var pts []string
		for _, pt := range s.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(pt.at), y(pt.v)))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", runColors[s.name],
			strings.Join(pts, " "))
	}
	markers(b, res, top, x)
}

// axes draws the time and value ticks and the grid.
func axes(b *strings.Builder, res Result, top int, ytop float64, x func(time.Time) float64, y func(int64) float64) {
	span := res.End.Sub(res.Start)
	step := niceDuration(span / 8)
	for d := time.Duration(0); d <= span && step > 0; d += step {
		xx := x(res.Start.Add(d))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>`+"\n", xx, top, xx, top+panelHeight)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", xx, top+panelHeight+16,
			esc(FormatOffset(d)))
	}
	ystep := niceCeil(ytop/(1<<20)/5) * (1 << 20)
	for v := 0.0; v <= ytop; v += ystep {
		yy := y(int64(v))
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`+"\n", marginLeft, yy, plotWidth-marginRight, yy)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#555">%.0f</text>`+"\n", marginLeft-6, yy+4, v/(1<<20))
	}
}

// markers draws a marker at every eviction of every run, in the evicting actor's colour and the run's
// row, with the eviction's number (the list under the plot names the pods).
func markers(b *strings.Builder, res Result, top int, x func(time.Time) float64) {
	for ri, run := range res.Runs {
		for _, e := range run.Events {
			if e.Kind != KindEvict || e.Eviction == nil {
				continue
			}
			xx := x(e.At)
			yy := float64(top + 16 + 22*ri)
			color := actorColors[e.Actor]
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-opacity="0.35"/>`+"\n", xx, top, xx,
				top+panelHeight, color)
			fmt.Fprintf(b, `<path d="M%.1f,%.1f l-5,-9 h10 z" fill="%s"><title>%s</title></path>`+"\n", xx, yy, color,
				esc(fmt.Sprintf("%s run: %s evicted %s at %s", run.Name, e.Actor, e.Eviction.Pod, FormatOffset(time.Duration(e.Offset)))))
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s" font-size="9" text-anchor="middle">%d</text>`+"\n",
				xx, yy+10, color, e.Eviction.Order)
		}
	}
}

// evictionList names the evictions of each run under the plot, one column per run.
func evictionList(b *strings.Builder, res Result, top int) {
	colWidth := (plotWidth - marginLeft - marginRight) / max(1, len(res.Runs))
	for ri, run := range res.Runs {
		xx := marginLeft + ri*colWidth
		fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold" fill="%s">evictions, run %s</text>`+"\n", xx, top,
			runColors[run.Name], esc(run.Name))
		n := 0
		for _, e := range run.Events {
			if e.Kind != KindEvict || e.Eviction == nil {
				continue
			}
			n++
			fmt.Fprintf(b, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", xx, top+16*n, actorColors[e.Actor],
				esc(fmt.Sprintf("%d  %s  %s by %s", e.Eviction.Order, FormatOffset(time.Duration(e.Offset)), e.Eviction.Pod, e.Actor)))
		}
		if n == 0 {
			fmt.Fprintf(b, `<text x="%d" y="%d" fill="#555">none</text>`+"\n", xx, top+16)
		}
	}
}

// maxEvictions is the most evictions of a run (at least one line).
func maxEvictions(res Result) int {
	most := 1
	for _, run := range res.Runs {
		n := 0
		for _, e := range run.Events {
			if e.Kind == KindEvict {
				n++
			}
		}
		most = max(most, n)
	}
	return most + 1
}

func legend(b *strings.Builder, res Result) {
	xx := marginLeft
	item := func(color, label string, dashed bool) {
		dash := ""
		if dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(b, `<line x1="%d" y1="40" x2="%d" y2="40" stroke="%s" stroke-width="2"%s/><text x="%d" y="44">%s</text>`+"\n",
			xx, xx+22, color, dash, xx+26, esc(label))
		xx += 30 + 7*len(label)
	}
	for _, run := range res.Runs {
		item(runColors[run.Name], "run: "+run.Name, false)
	}
	if len(res.Recorded) > 0 {
		item(runColors["recorded"], "recorded", false)
	}
	item(actorColors[ActorKubelet], "kubelet threshold", true)
	if len(res.AgentThresholds) > 0 {
		item(actorColors[ActorAgent], "agent threshold", true)
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	v = max(v, 1)
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// niceDuration rounds d up to a readable tick interval.
func niceDuration(d time.Duration) time.Duration {
	for _, n := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
		30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
		30 * time.Minute, time.Hour} {
		if d <= n {
			return n
		}
	}
	return d.Round(time.Hour)
}

var svgEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return svgEscaper.Replace(s) }
