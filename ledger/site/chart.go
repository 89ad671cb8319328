package site

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/planrun/planrun/ledger/history"
)

// chart is one figure over a series' runs: a line (p50, or the figure itself), an
// optional band (p50 to p99) and the runs where the environment changed.
type chart struct {
	Title   string
	Unit    string
	Line    []float64
	Band    []float64 // the band's upper edge (p99); nil for no band
	Dates   []string  // each run's date, for the x axis ("11-02"); nil: run numbers alone
	Changes []change
}

// change marks a point where the environment changed.
type change struct {
	At   int
	Text string
}

const (
	chartW, chartH         = 640.0, 236.0
	padL, padR, padT, padB = 64.0, 16.0, 24.0, 48.0
	// xLabels is the most runs the x axis labels: more would land on each other.
	xLabels = 8
)

// svg draws the chart as inline SVG: nothing to fetch, no script. The y axis starts at 0
// (a figure's change is read against its size) and ticks at round numbers; the x axis
// labels runs by number and date.
func (c chart) svg() string {
	lo, hi, ok := c.span()
	if !ok {
		return `<p class="none">not measured</p>`
	}
	ticks := niceTicks(lo, hi, 5)
	a := area{n: len(c.Line), lo: ticks[0], hi: ticks[len(ticks)-1]}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="series" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s">`,
		chartW, chartH, chartW, chartH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#fafafa" stroke="#ccc"/>`, padL, padT, chartW-padL-padR, chartH-padT-padB)
	c.axes(&b, a, ticks)
	if c.Band != nil {
		c.band(&b, a)
	}
	c.changes(&b, a)
	c.line(&b, a)
	b.WriteString(`</svg>`)
	return b.String()
}

// span is the range of the values drawn, from 0 at most; ok is false when none is.
func (c chart) span() (lo, hi float64, ok bool) {
	hi = math.Inf(-1)
	for _, vs := range [][]float64{c.Line, c.Band} {
		for _, v := range vs {
			if finite(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	return lo, hi, !math.IsInf(hi, -1)
}

// area places a chart's n runs and its values lo..hi in the plot.
type area struct {
	n      int
	lo, hi float64
}

// x is run i's position, the one run in the middle.
func (a area) x(i int) float64 {
	if a.n == 1 {
		return padL + (chartW-padL-padR)/2
	}
	return padL + float64(i)*(chartW-padL-padR)/float64(a.n-1)
}

func (a area) y(v float64) float64 { return padT + (a.hi-v)/(a.hi-a.lo)*(chartH-padT-padB) }

// axes draws the grid with the y axis's ticks, the x axis's runs and dates, and the title.
func (c chart) axes(b *strings.Builder, a area, ticks []float64) {
	for _, v := range ticks {
		fmt.Fprintf(b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, padL, chartW-padR, a.y(v), a.y(v))
		fmt.Fprintf(b, `<text class="ytick" x="%g" y="%.1f" font-size="11" text-anchor="end" fill="#555">%s</text>`, padL-4, a.y(v)+4, tickLabel(v, ticks))
	}
	for _, i := range xTicks(a.n, xLabels) {
		fmt.Fprintf(b, `<text class="xtick" x="%.1f" y="%g" font-size="11" text-anchor="%s" fill="#555">run %d</text>`, a.x(i), chartH-padB+14, anchor(a.x(i)), i+1)
		if i < len(c.Dates) {
			fmt.Fprintf(b, `<text class="xdate" x="%.1f" y="%g" font-size="9" text-anchor="%s" fill="#888">%s</text>`, a.x(i), chartH-padB+27, anchor(a.x(i)), html.EscapeString(c.Dates[i]))
		}
	}
	fmt.Fprintf(b, `<text x="%g" y="14" font-size="12" fill="#333">%s (%s)</text>`, padL, html.EscapeString(c.Title), html.EscapeString(c.Unit))
}

// band draws the p50–p99 band: along the p99s and back along the p50s, over the runs
// that have both.
func (c chart) band(b *strings.Builder, a area) {
	var pts []string
	for i, v := range c.Band {
		if finite(v) && finite(c.Line[i]) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", a.x(i), a.y(v)))
		}
	}
	for i := a.n - 1; i >= 0; i-- {
		if finite(c.Band[i]) && finite(c.Line[i]) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", a.x(i), a.y(c.Line[i])))
		}
	}
	fmt.Fprintf(b, `<polygon class="band" points="%s" fill="#1f77b4" fill-opacity="0.18" stroke="none"><title>p50–p99</title></polygon>`, strings.Join(pts, " "))
}

// changes marks the runs where the environment changed, each with a label.
func (c chart) changes(b *strings.Builder, a area) {
	for _, ch := range c.Changes {
		fmt.Fprintf(b, `<line class="change" x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#d62728" stroke-dasharray="4 3"><title>%s</title></line>`,
			a.x(ch.At), a.x(ch.At), padT, chartH-padB, html.EscapeString(ch.Text))
		// Inside the plot, on the side of the line that has room: a label centred on the
		// last run ran off the chart's right edge.
		dx, side := 3.0, "start"
		if a.x(ch.At) > (padL+chartW-padR)/2 {
			dx, side = -3, "end"
		}
		fmt.Fprintf(b, `<text class="change-label" x="%.1f" y="%g" font-size="11" fill="#d62728" text-anchor="%s">change at run %d<title>%s</title></text>`,
			a.x(ch.At)+dx, padT+12, side, ch.At+1, html.EscapeString(ch.Text))
	}
}

// line draws the figure's line and a point at each run measured.
func (c chart) line(b *strings.Builder, a area) {
	var pts []string
	for i, v := range c.Line {
		if finite(v) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", a.x(i), a.y(v)))
		}
	}
	fmt.Fprintf(b, `<polyline class="line" points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>`, strings.Join(pts, " "))
	for i, v := range c.Line {
		if finite(v) {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="#1f77b4"><title>run %d: %s</title></circle>`, a.x(i), a.y(v), i+1, history.FormatValue(v))
		}
	}
}

// anchor keeps an x-axis label inside the chart: the first and last runs' labels sit
// at the plot's edges, where a centred label would be cut.
func anchor(x float64) string {
	switch {
	case x <= padL+20:
		return "start"
	case x >= chartW-padR-20:
		return "end"
	}
	return "middle"
}

// niceTicks are round values (1, 2 or 5 times a power of ten apart, the smallest such
// step that cuts lo..hi into at most n parts) from at or below lo to at or above hi.
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + max(math.Abs(lo), 1)
	}
	raw := (hi - lo) / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	m := 10.0
	for _, k := range []float64{1, 2, 5} {
		if k*mag >= raw*(1-1e-9) {
			m = k
			break
		}
	}
	step := m * mag
	// i·m/10ᵏ rather than i·step: 3 × 0.2 is 0.6000000000000001.
	scale := func(x float64) float64 { return x * mag }
	if mag < 1 {
		inv := math.Round(1 / mag)
		scale = func(x float64) float64 { return x / inv }
	}
	var out []float64
	for i := math.Floor(lo/step + 1e-9); ; i++ {
		v := scale(i * m)
		out = append(out, v)
		if v >= hi*(1-1e-12) || len(out) > 4*n {
			return out
		}
	}
}

// tickLabel writes v with as many decimals as the ticks' step needs, and no more.
func tickLabel(v float64, ticks []float64) string {
	step := 1.0
	if len(ticks) > 1 {
		step = ticks[1] - ticks[0]
	}
	dec := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// xTicks are the runs the x axis labels: all of them up to most, else most spread
// evenly from the first to the last.
func xTicks(n, most int) []int {
	if n <= most {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for k := range most {
		out = append(out, int(math.Round(float64(k)*float64(n-1)/float64(most-1))))
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
