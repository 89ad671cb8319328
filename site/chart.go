package site

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/planrun/planrun/history"
)

// chart is one figure over a series' runs: a line (p50, or the figure itself), an
// optional band (p50 to p99) and the runs where the environment changed.
type chart struct {
	Title   string
	Unit    string
	Line    []float64
	Band    []float64 // the band's upper edge (p99); nil for no band
	Changes []change
}

// change marks a point where the environment changed.
type change struct {
	At   int
	Text string
}

const (
	chartW, chartH         = 640.0, 220.0
	padL, padR, padT, padB = 64.0, 16.0, 24.0, 32.0
)

// svg draws the chart as inline SVG: nothing to fetch, no script.
func (c chart) svg() string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, vs := range [][]float64{c.Line, c.Band} {
		for _, v := range vs {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return `<p class="none">not measured</p>`
	}
	if hi == lo {
		lo, hi = lo*0.9, hi*1.1+1e-9
	}
	lo, hi = lo-(hi-lo)*0.05, hi+(hi-lo)*0.05
	n := len(c.Line)
	x := func(i int) float64 {
		if n == 1 {
			return padL + (chartW-padL-padR)/2
		}
		return padL + float64(i)*(chartW-padL-padR)/float64(n-1)
	}
	y := func(v float64) float64 { return padT + (hi-v)/(hi-lo)*(chartH-padT-padB) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="series" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s">`,
		chartW, chartH, chartW, chartH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#fafafa" stroke="#ccc"/>`, padL, padT, chartW-padL-padR, chartH-padT-padB)
	for _, v := range []float64{lo, (lo + hi) / 2, hi} {
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" font-size="11" text-anchor="end" fill="#555">%s</text>`, padL-4, y(v)+4, history.FormatValue(v))
	}
	fmt.Fprintf(&b, `<text x="%g" y="14" font-size="12" fill="#333">%s (%s)</text>`, padL, html.EscapeString(c.Title), html.EscapeString(c.Unit))
	if c.Band != nil {
		var pts []string
		for i, v := range c.Band {
			if finite(v) && finite(c.Line[i]) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			}
		}
		for i := n - 1; i >= 0; i-- {
			if finite(c.Band[i]) && finite(c.Line[i]) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(c.Line[i])))
			}
		}
		fmt.Fprintf(&b, `<polygon class="band" points="%s" fill="#1f77b4" fill-opacity="0.18" stroke="none"><title>p50–p99</title></polygon>`, strings.Join(pts, " "))
	}
	for _, ch := range c.Changes {
		fmt.Fprintf(&b, `<line class="change" x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#d62728" stroke-dasharray="4 3"><title>%s</title></line>`,
			x(ch.At), x(ch.At), padT, chartH-padB, html.EscapeString(ch.Text))
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" font-size="11" fill="#d62728" text-anchor="middle">▲ run %d</text>`, x(ch.At), chartH-padB+14, ch.At+1)
	}
	var pts []string
	for i, v := range c.Line {
		if finite(v) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
		}
	}
	fmt.Fprintf(&b, `<polyline class="line" points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>`, strings.Join(pts, " "))
	for i, v := range c.Line {
		if finite(v) {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="#1f77b4"><title>run %d: %s</title></circle>`, x(i), y(v), i+1, history.FormatValue(v))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
