package runreport

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bandPaths are the styles of the SVG paths p draws in a band's colour (a quarter
// opaque): a single point's thick bar strokes, a polygon fills.
func bandPaths(t *testing.T, p *plot.Plot) []string {
	t.Helper()
	wt, err := p.WriterTo(vg.Points(200), vg.Points(200), "svg")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`style="([^"]*opacity:0\.25[^"]*)"`).FindAllStringSubmatch(b.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

// A band over one point is a thick faint bar from p50 to p99; over several, one polygon
// from the p50s out and the p99s back; over no point both sides measured, nothing.
func TestAddBandShapes(t *testing.T) {
	p99 := []namedXYs{{xys: plotter.XYs{{X: 1, Y: 0.95}, {X: 2, Y: 1.0}, {X: 4, Y: 1.5}}}}
	band := func(p50 plotter.XYs, p99 []namedXYs) (*plot.Plot, []string) {
		p := plot.New()
		addBand(p, 0, p50, p99)
		return p, bandPaths(t, p)
	}
	p, paths := band(plotter.XYs{{X: 2, Y: 0.9}}, p99)
	if len(paths) != 1 || !strings.Contains(paths[0], "stroke-width:8") || strings.Contains(paths[0], "fill-opacity") {
		t.Errorf("one point: band paths %q, want one 8 pt stroke", paths)
	}
	if p.Y.Min != 0.9 || p.Y.Max != 1.0 {
		t.Errorf("one point: band spans y %v–%v; want 0.9–1", p.Y.Min, p.Y.Max)
	}
	p, paths = band(plotter.XYs{{X: 1, Y: 0.8}, {X: 2, Y: 0.9}, {X: 3, Y: 1.1}, {X: 4, Y: 1.3}}, p99)
	if len(paths) != 1 || !strings.Contains(paths[0], "fill-opacity") || strings.Contains(paths[0], "stroke-width:8") {
		t.Errorf("three points: band paths %q, want one filled polygon", paths)
	}
	// x = 3 has no p99: the polygon runs over 1, 2 and 4.
	if p.X.Min != 1 || p.X.Max != 4 || p.Y.Min != 0.8 || p.Y.Max != 1.5 {
		t.Errorf("three points: band spans x %v–%v, y %v–%v; want x 1–4, y 0.8–1.5", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	if _, paths := band(plotter.XYs{{X: 3, Y: 1}}, p99); len(paths) != 0 {
		t.Errorf("no point with a p99: band paths %q, want none", paths)
	}
	if _, paths := band(plotter.XYs{{X: 1, Y: 1}}, nil); len(paths) != 0 {
		t.Errorf("no p99 series: band paths %q, want none", paths)
	}
}

// headroom adds a twentieth of each axis's span above its maximum (not above an SLO
// panel's 100%), whatever the axis starts at.
func TestHeadroomIsOneTwentiethOfTheSpan(t *testing.T) {
	p := plot.New()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 10, 50, 2, 6
	headroom(p)
	if p.X.Max != 52 || p.Y.Max != 6.2 {
		t.Errorf("axes end at x %v, y %v; want 52 and 6.2", p.X.Max, p.Y.Max)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 4, 0, 100
	headroom(p)
	if p.X.Max != 4.2 || p.Y.Max != 100 {
		t.Errorf("axes end at x %v, y %v; want 4.2 and 100", p.X.Max, p.Y.Max)
	}
}

// Points exactly 3% of the span apart, on either axis, still sit on one spot; further
// apart they get labels of their own.
func TestMergeLabelsAtThreePercent(t *testing.T) {
	span := 100.0
	d := 0.03 * span
	for _, c := range []struct {
		name string
		near plotter.XY
		want []string
	}{
		{"x at 3%", plotter.XY{X: d, Y: 0}, []string{" c1, c2", " c3"}},
		{"y at 3%", plotter.XY{X: 0, Y: d}, []string{" c1, c2", " c3"}},
		{"x beyond 3%", plotter.XY{X: 3.5, Y: 0}, []string{" c1", " c2", " c3"}},
		{"y beyond 3%", plotter.XY{X: 0, Y: 3.5}, []string{" c1", " c2", " c3"}},
	} {
		got := mergeLabels(plotter.XYs{{X: 0, Y: 0}, c.near, {X: span, Y: span}}, []string{"c1", "c2", "c3"})
		if strings.Join(got.Labels, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: labels %q, want %q", c.name, got.Labels, c.want)
		}
	}
}

// A legend names a cell by model, quantization, tool, hardware and workload, and by its
// id when the rows name none of them.
func TestCellLabel(t *testing.T) {
	if got, want := cellLabel(ledgertest.SampleRow("c", 1)), "qwen2.5-7b q4_K_M ollama.local rtx4060 short"; got != want {
		t.Errorf("cellLabel = %q, want %q", got, want)
	}
	r := ledger.NewRow()
	r.CellID = "bare"
	if got := cellLabel(r); got != "bare" {
		t.Errorf("cellLabel of a row naming nothing = %q, want its id", got)
	}
}

// scaled multiplies a figure by its scale: TPOT in seconds to the charts' milliseconds.
func TestScaledMultiplies(t *testing.T) {
	r := ledgertest.SampleRow("c", 1)
	if got := scaled(func(r ledger.Row) float64 { return r.TPOT.P50 }, 1000)(r); math.Abs(got-28) > 1e-9 {
		t.Errorf("TPOT p50 scaled by 1000 = %v, want 28", got)
	}
}

// The throughput chart needs two loads with a measured point; each point is labelled
// with its load.
func TestParetoFigureNeedsTwoMeasuredLoads(t *testing.T) {
	if f := paretoFigure([]ledger.Row{ledgertest.SampleRow("a", 1), ledgertest.SampleRow("a", 1)}); f != nil {
		t.Error("one load: a throughput chart")
	}
	unmeasured := []ledger.Row{ledgertest.SampleRow("a", 1), ledgertest.SampleRow("a", 4)}
	for i := range unmeasured {
		unmeasured[i].OutputTokS = math.NaN()
	}
	if f := paretoFigure(unmeasured); f != nil {
		t.Error("two loads without a throughput: a throughput chart of no point")
	}
	a4 := ledgertest.SampleRow("a", 4)
	a4.TTFT.P50, a4.TPOT.P50, a4.OutputTokS = 1.31, 0.0412, 98.5
	f := paretoFigure([]ledger.Row{ledgertest.SampleRow("a", 1), a4})
	if f == nil {
		t.Fatal("two loads: no throughput chart")
	}
	svg, err := f.render("svg")
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"c1", "c4"} {
		if !bytes.Contains(svg, []byte("> "+label+"</text>")) {
			t.Errorf("the throughput chart does not label a point %s", label)
		}
	}
}

// svgSize is an SVG's width and height in points.
func svgSize(t *testing.T, svg []byte) (w, h float64) {
	t.Helper()
	m := regexp.MustCompile(`<svg width="([\d.]+)pt" height="([\d.]+)pt"`).FindSubmatch(svg)
	if m == nil {
		t.Fatalf("no SVG size in %.200s", svg)
	}
	w, _ = strconv.ParseFloat(string(m[1]), 64)
	h, _ = strconv.ParseFloat(string(m[2]), 64)
	return w, h
}

// svgTextAt is where an SVG draws a text (x, and the baseline's height above the
// bottom edge: the figure's y axis points up).
func svgTextAt(t *testing.T, svg []byte, text string) (x, y float64) {
	t.Helper()
	m := regexp.MustCompile(`<text x="([\d.]+)" y="-([\d.]+)"[^>]*>` + regexp.QuoteMeta(text) + `</text>`).FindSubmatch(svg)
	if m == nil {
		t.Fatalf("the SVG has no text %q", text)
	}
	x, _ = strconv.ParseFloat(string(m[1]), 64)
	y, _ = strconv.ParseFloat(string(m[2]), 64)
	return x, y
}

// A figure is its rows of 4 × 3 in panels between a title strip on top and a legend
// strip below, each strip its text's height plus 8 pt above and below; the title sits
// in its strip, the panels between the strips.
func TestChartLayout(t *testing.T) {
	a4 := ledgertest.SampleRow("a", 4)
	a4.TTFT.P50, a4.OutputTokS = 1.31, 98.5
	b := ledgertest.SampleRow("b", 1)
	b.Model = "other"
	f := latencyFigure([]ledger.Row{ledgertest.SampleRow("a", 1), a4, b})
	if f == nil || len(f.panels) != 1 || len(f.panels[0]) != 4 {
		t.Fatalf("latency figure %+v, want one row of 4 panels", f)
	}
	svg, err := f.render("svg")
	if err != nil {
		t.Fatal(err)
	}
	titleStyle := newPlot().Title.TextStyle
	titleStyle.Font.Size = vg.Points(13)
	titleH := float64(titleStyle.Height(f.title)) + 16
	legendH := float64(f.legend.Rectangle(draw.Canvas{}).Size().Y) + 16
	w, h := svgSize(t, svg)
	if want := 3*72 + titleH + legendH; math.Abs(h-want) > 0.01 {
		t.Errorf("height %v pt, want a 216 pt row of panels + title %v + legend %v = %v", h, titleH, legendH, want)
	}
	if w != 4*288 {
		t.Errorf("width %v pt, want 4 panels of 288 pt", w)
	}
	x, y := svgTextAt(t, svg, f.title)
	if x != 8 || y > h-8 || y < h-titleH {
		t.Errorf("title at x %v, baseline %v: want x 8, within its strip %v–%v", x, y, h-titleH, h-8)
	}
	_, y = svgTextAt(t, svg, "TTFT (s)") // the first panel's title
	if y > h-titleH || y < legendH {
		t.Errorf("a panel's title at %v: want it between the strips, %v–%v", y, legendH, h-titleH)
	}
}

// A legend wider than the panels widens the figure to a quarter more than the legend,
// plus 8 pt each side: a browser without the Liberation fonts draws wider text.
func TestChartWidensForALongLegend(t *testing.T) {
	long := strings.Repeat("a long series name ", 6)
	f := vramFigure([]VRAMSeries{{GPU: "0", Label: long, Points: []VRAMPoint{{Seconds: 0, GB: 1}, {Seconds: 1, GB: 2}}}})
	if f == nil {
		t.Fatal("no VRAM figure")
	}
	svg, err := f.render("svg")
	if err != nil {
		t.Fatal(err)
	}
	legendW := float64(f.legend.Rectangle(draw.Canvas{}).Size().X)
	if legendW <= 288 {
		t.Fatalf("legend %v pt wide, not wider than the one panel: the test needs a longer name", legendW)
	}
	if w, _ := svgSize(t, svg); math.Abs(w-(legendW*5/4+16)) > 0.01 {
		t.Errorf("width %v pt, want 5/4 × legend %v + 16 = %v", w, legendW, legendW*5/4+16)
	}
}

// The SLO chart groups a level's bars (12 pt wide, one per cell, in cell order) side by
// side, centred on the level's tick.
func TestSLOBarsCentredOnTheirLevel(t *testing.T) {
	var rows []ledger.Row
	for i, cell := range []string{"a", "b", "c"} {
		r := ledgertest.SampleRow(cell, 4)
		r.SLOAttainmentPct = 50 + 10*float64(i)
		rows = append(rows, r)
	}
	f := sloFigure(rows)
	if f == nil {
		t.Fatal("no SLO figure")
	}
	svg, err := f.render("svg")
	if err != nil {
		t.Fatal(err)
	}
	num := `([\d.]+)`
	// The level's tick is where the grid draws its one vertical line (grey, 0.25 pt).
	var ticks []float64
	for _, m := range regexp.MustCompile(`<path d="M`+num+`,[\d.]+L`+num+`,[\d.]+" style="fill:none;stroke:#808080;`).FindAllStringSubmatch(string(svg), -1) {
		if m[1] == m[2] {
			x, _ := strconv.ParseFloat(m[1], 64)
			ticks = append(ticks, x)
		}
	}
	if len(ticks) != 1 {
		t.Fatalf("vertical grid lines at %v, want one (one level)", ticks)
	}
	for c := range rows {
		col := seriesColor(c)
		re := regexp.MustCompile(`<path d="M` + num + `,[\d.]+L[\d.]+,[\d.]+L` + num + `,[^"]*Z" style="fill:` + fmt.Sprintf("#%02X%02X%02X", col.R, col.G, col.B) + `"`)
		var bars [][2]float64 // the legend's swatch has the colour too, 32 pt wide
		for _, m := range re.FindAllStringSubmatch(string(svg), -1) {
			x0, _ := strconv.ParseFloat(m[1], 64)
			x1, _ := strconv.ParseFloat(m[2], 64)
			if math.Abs(x1-x0-12) < 0.01 {
				bars = append(bars, [2]float64{x0, x1})
			}
		}
		if want := ticks[0] + 12*float64(c-1); len(bars) != 1 || math.Abs((bars[0][0]+bars[0][1])/2-want) > 0.01 {
			t.Errorf("cell %d: 12 pt bars %v, want one centred at %v (tick %v)", c, bars, want, ticks[0])
		}
	}
}

// The load axis ticks at the levels measured, labelled as the plan wrote them (the
// latency chart ticked at 3, 9 and 15 for levels 1, 4 and 16), on a log scale when the
// levels grow by factors, so 1 and 2 do not print on top of each other.
func TestLoadAxisTicksAtTheLevels(t *testing.T) {
	for _, c := range []struct {
		loads []float64
		log   bool
	}{{[]float64{1, 4, 16}, true}, {[]float64{1, 2, 4, 8, 16, 32, 64}, true}, {[]float64{2, 4, 6}, false}, {[]float64{0.5, 1}, false}} {
		p := plot.New()
		tickAtLoads(p, c.loads)
		var got []string
		for _, tk := range p.X.Tick.Marker.Ticks(c.loads[0], c.loads[len(c.loads)-1]) {
			got = append(got, tk.Label)
		}
		var want []string
		for _, l := range c.loads {
			want = append(want, ledger.FormatFloat(l))
		}
		if !slices.Equal(got, want) {
			t.Errorf("levels %v: ticks %q", c.loads, got)
		}
		if _, isLog := p.X.Scale.(plot.LogScale); isLog != c.log {
			t.Errorf("levels %v: log scale %v, want %v", c.loads, isLog, c.log)
		}
	}
}
