package runreport

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/planrun/planrun/ledger"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // registers png for draw.NewFormattedCanvas
	_ "gonum.org/v1/plot/vg/vgsvg" // registers svg
)

// Chart is a figure written beside the report: File is the SVG and PNG the same figure
// as PNG (PR comments show PNG, not SVG), both relative to the report's folder. SVG
// holds the SVG itself, which report.html inlines.
type Chart struct {
	Title string
	File  string
	PNG   string
	SVG   []byte
}

// VRAMPoint is one NVML sample: seconds since the cell started, GB in use.
type VRAMPoint struct {
	Seconds float64
	GB      float64
}

// VRAMSeries is the VRAM-over-time trace of one cell on one GPU (from the gpu sampler).
// Series with the same GPU share a panel; an empty GPU is one unnamed panel.
type VRAMSeries struct {
	Label  string
	GPU    string
	Points []VRAMPoint
}

// Chart file names (SVG; the PNG has the same name with .png), fixed so the links stay
// valid as the report is re-rendered.
const (
	LatencyChartFile = "latency_vs_load.svg"
	ParetoChartFile  = "throughput_vs_latency.svg"
	VRAMChartFile    = "vram_over_time.svg"
	SLOChartFile     = "slo_attainment.svg"
)

// palette colours series by cell, the same cell in the same colour in every chart
// (Tableau 10: distinct, and readable on white).
var palette = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
	{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
	{0x9c, 0x75, 0x5f, 0xff}, {0xba, 0xb0, 0xac, 0xff},
}

// chartFont is the charts' typeface: sans, as report.html's text is (gonum's default is
// Liberation Serif). It is set on each plot, legend and label drawn here rather than as
// gonum's global default, so that importing this package changes no other chart.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// sans is s in chartFont, at its own size.
func sans(s text.Style) text.Style {
	s.Font = font.From(chartFont, s.Font.Size)
	return s
}

// newPlot is plot.New with every text of it in chartFont.
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle = sans(p.Title.TextStyle)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = sans(a.Label.TextStyle)
		a.Tick.Label = sans(a.Tick.Label)
	}
	p.Legend.TextStyle = sans(p.Legend.TextStyle)
	return p
}

func seriesColor(i int) color.RGBA { return palette[i%len(palette)] }

// bandColor is the series colour, faint, for the p50–p99 band behind its line.
func bandColor(i int) color.NRGBA {
	c := seriesColor(i)
	return color.NRGBA{c.R, c.G, c.B, 0x40}
}

// figures are the report's figures that have a measured point: latency against load
// with p50–p99 bands, throughput against latency, VRAM over time per GPU and SLO
// attainment.
func figures(rows []ledger.Row, vram []VRAMSeries) []*figure {
	var figs []*figure
	for _, f := range []*figure{latencyFigure(rows), paretoFigure(rows), vramFigure(vram), sloFigure(rows)} {
		if f != nil {
			figs = append(figs, f)
		}
	}
	return figs
}

// chartsOf renders each figure as SVG; the charts are in the figures' order.
func chartsOf(figs []*figure) ([]Chart, error) {
	var charts []Chart
	for _, f := range figs {
		svg, err := f.render("svg")
		if err != nil {
			return charts, err
		}
		charts = append(charts, Chart{Title: f.title, File: f.file, PNG: pngName(f.file), SVG: svg})
	}
	return charts, nil
}

// WriteCharts writes each figure of Charts into dir as SVG and PNG and returns them,
// for Report.Charts. Each figure is built once, for both formats.
func WriteCharts(dir string, rows []ledger.Row, vram []VRAMSeries) ([]Chart, error) {
	return writeFigures(dir, figures(rows, vram))
}

// writeFigures writes each figure into dir as SVG and PNG and returns them.
func writeFigures(dir string, figs []*figure) ([]Chart, error) {
	charts, err := chartsOf(figs)
	if err != nil {
		return nil, err
	}
	for i, c := range charts {
		png, err := figs[i].render("png")
		if err != nil {
			return charts[:i], err
		}
		for name, data := range map[string][]byte{c.File: c.SVG, c.PNG: png} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return charts[:i], fmt.Errorf("write chart: %w", err)
			}
		}
	}
	return charts, nil
}

func pngName(svg string) string { return strings.TrimSuffix(svg, ".svg") + ".png" }

// loadAxis is how a level's load is read: closed-loop rows by concurrency, open-loop
// rows by their request rate. The two never share an x axis.
type loadAxis struct {
	label string
	x     func(ledger.Row) float64
	has   func(ledger.Row) bool
}

var loadAxes = []loadAxis{
	{"concurrency", func(r ledger.Row) float64 { return float64(r.Concurrency) }, func(r ledger.Row) bool { return !(r.RequestRate > 0) }},
	{"request rate (req/s)", func(r ledger.Row) float64 { return r.RequestRate }, func(r ledger.Row) bool { return r.RequestRate > 0 }},
}

// loadMetric is one latency or throughput figure of the latency chart; p99 is nil when
// the figure has no band.
type loadMetric struct {
	label    string
	scale    float64
	p50, p99 func(ledger.Row) float64
	// interval names the ledger figure whose confidence interval the p50 line's error
	// bars draw (in the chart's units, which are the ledger's).
	interval string
}

var loadMetrics = []loadMetric{
	{"TTFT (s)", 1, func(r ledger.Row) float64 { return r.TTFT.P50 }, func(r ledger.Row) float64 { return r.TTFT.P99 }, "ttft_p50_s"},
	{"TPOT (ms)", 1000, func(r ledger.Row) float64 { return r.TPOT.P50 }, func(r ledger.Row) float64 { return r.TPOT.P99 }, "tpot_p50_ms"},
	{"E2E (s)", 1, func(r ledger.Row) float64 { return r.E2E.P50 }, func(r ledger.Row) float64 { return r.E2E.P99 }, "e2e_p50_s"},
	{"output tokens/s", 1, func(r ledger.Row) float64 { return r.OutputTokS }, nil, "output_tok_s"},
}

// errorBars are a series' points with the confidence interval of each (zero where a
// row has none), for plotter.NewYErrorBars.
type errorBars struct {
	plotter.XYs
	plotter.YErrors
}

// addErrorBars draws, in the cell's colour, the interval of each point of s whose row has
// a bounded one on the ledger figure name; nothing when none has.
func addErrorBars(p *plot.Plot, s namedXYs, name string) bool {
	e := errorBars{XYs: s.xys, YErrors: make(plotter.YErrors, len(s.xys))}
	any := false
	for i, r := range s.rows {
		if iv, _, ok := r.Interval(name); ok && iv.Bounded() && iv.Lo <= s.xys[i].Y && s.xys[i].Y <= iv.Hi {
			e.YErrors[i].Low, e.YErrors[i].High = s.xys[i].Y-iv.Lo, iv.Hi-s.xys[i].Y
			any = true
		}
	}
	if !any {
		return false
	}
	bars, err := plotter.NewYErrorBars(e)
	if err != nil {
		return false
	}
	bars.LineStyle = draw.LineStyle{Color: seriesColor(s.cell), Width: vg.Points(1)}
	bars.CapWidth = vg.Points(5)
	p.Add(bars)
	return true
}

// latencyFigure: one row of panels per kind of load, one panel per figure, each cell a
// p50 line over its p50–p99 band.
func latencyFigure(rows []ledger.Row) *figure {
	f := newFigure("TTFT, TPOT and E2E against load (line p50, bars its confidence interval, band p50–p99)", LatencyChartFile)
	cells := cellIndex(rows)
	for _, ax := range loadAxes {
		if distinctLoads(rows, ax) < 2 {
			// One load (a single replay, one concurrency) is no line: its figures are in
			// the table, and an axis around one point only reads as -1 to 1.
			continue
		}
		var panels []*plot.Plot
		any := false
		loads := loadsOn(rows, ax)
		for _, m := range loadMetrics {
			p := newPanel(m.label, ax.label, m.label)
			tickAtLoads(p, loads)
			for _, s := range cellSeries(rows, cells, ax.has, ax.x, scaled(m.p50, m.scale)) {
				any = true
				if m.p99 != nil {
					addBand(p, s.cell, s.xys, cellSeries(s.rows, cells, ax.has, ax.x, scaled(m.p99, m.scale)))
				}
				addErrorBars(p, s, m.interval)
				f.line(p, s)
			}
			panels = append(panels, p)
		}
		if any {
			f.panels = append(f.panels, panels)
		}
	}
	return f.orNil()
}

// distinctLoads counts the different loads of the measured rows on axis ax.
func distinctLoads(rows []ledger.Row, ax loadAxis) int { return len(loadsOn(rows, ax)) }

// loadsOn are the different loads of the measured rows on axis ax, in order.
func loadsOn(rows []ledger.Row, ax loadAxis) []float64 {
	var out []float64
	for _, r := range rows {
		if x := ax.x(r); ax.has(r) && finite(x) && finite(r.TTFT.P50) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// tickAtLoads puts the x axis's ticks at the levels measured (1, 4, 16), not at round
// numbers between them (3, 9, 15), and spreads levels that grow by factors (1 … 64) on a
// log scale, where they would otherwise crowd the axis's start and their labels overlap.
func tickAtLoads(p *plot.Plot, loads []float64) {
	var ticks []plot.Tick
	for _, l := range loads {
		ticks = append(ticks, plot.Tick{Value: l, Label: ledger.FormatFloat(l)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(loads) >= 3 && loads[0] > 0 && loads[len(loads)-1]/loads[0] >= 8 {
		p.X.Scale = plot.LogScale{}
		p.X.Min, p.X.Max = loads[0]/1.2, loads[len(loads)-1]*1.2
	}
}

// paretoFigure plots each level's throughput against its latency, cell by cell, each
// point labelled with its load: the trade-off a deployment picks a point on.
func paretoFigure(rows []ledger.Row) *figure {
	f := newFigure("Output throughput against latency (each point a level)", ParetoChartFile)
	cells := cellIndex(rows)
	var panels []*plot.Plot
	for _, m := range loadMetrics[:2] {
		p := newPanel("throughput vs "+m.label+" p50", m.label+" p50", "output tokens/s")
		// Latency from zero too: points microseconds apart otherwise stretch across the
		// axis, with ticks that all read the same ("20, 20, 20").
		p.X.Min = 0
		var points plotter.XYs
		var labels []string
		for _, ax := range loadAxes {
			for _, s := range cellSeries(rows, cells, ax.has, scaled(m.p50, m.scale), func(r ledger.Row) float64 { return r.OutputTokS }) {
				f.line(p, s)
				points = append(points, s.xys...)
				for _, r := range s.rows {
					labels = append(labels, loadLabel(r))
				}
			}
		}
		if l, err := plotter.NewLabels(mergeLabels(points, labels)); err == nil {
			for i := range l.TextStyle {
				l.TextStyle[i] = sans(l.TextStyle[i])
			}
			p.Add(l)
		}
		panels = append(panels, p)
	}
	if f.entries > 0 && distinctLoads(rows, loadAxes[0])+distinctLoads(rows, loadAxes[1]) >= 2 {
		f.panels = [][]*plot.Plot{panels}
	}
	return f.orNil()
}

// mergeLabels gives points that sit on one spot (within 3% of either axis's span from
// zero) one label naming each of their loads once, at the first of them: labels drawn
// on one spot overprint each other unreadably.
func mergeLabels(points plotter.XYs, labels []string) plotter.XYLabels {
	var spanX, spanY float64
	for _, p := range points {
		spanX, spanY = max(spanX, math.Abs(p.X)), max(spanY, math.Abs(p.Y))
	}
	near := func(a, b plotter.XY) bool {
		return math.Abs(a.X-b.X) <= 0.03*spanX && math.Abs(a.Y-b.Y) <= 0.03*spanY
	}
	var out plotter.XYLabels
	var names [][]string
	for i, p := range points {
		at := slices.IndexFunc(out.XYs, func(q plotter.XY) bool { return near(p, q) })
		if at < 0 {
			out.XYs = append(out.XYs, p)
			names = append(names, nil)
			at = len(names) - 1
		}
		if !slices.Contains(names[at], labels[i]) {
			names[at] = append(names[at], labels[i])
		}
	}
	for _, n := range names {
		out.Labels = append(out.Labels, " "+strings.Join(n, ", "))
	}
	return out
}

// vramFigure: one panel per GPU, one line per cell and level.
func vramFigure(vram []VRAMSeries) *figure {
	f := newFigure("VRAM in use over time", VRAMChartFile)
	var gpus []string
	panel := map[string]*plot.Plot{}
	for i, s := range vram {
		var xy plotter.XYs
		for _, p := range s.Points {
			if !math.IsNaN(p.GB) {
				xy = append(xy, plotter.XY{X: p.Seconds, Y: p.GB})
			}
		}
		if len(xy) == 0 {
			continue
		}
		p, ok := panel[s.GPU]
		if !ok {
			p = newPanel(strings.TrimSpace("VRAM in use "+s.GPU), "seconds since the level started", "GB")
			panel[s.GPU] = p
			gpus = append(gpus, s.GPU)
		}
		f.line(p, namedXYs{name: s.Label, cell: i, xys: xy})
	}
	for _, g := range gpus {
		f.panels = append(f.panels, []*plot.Plot{panel[g]})
	}
	return f.orNil()
}

// sloFigure: one bar per level, grouped by load, coloured by cell.
func sloFigure(rows []ledger.Row) *figure {
	f := newFigure("SLO attainment (% of requests meeting every limit)", SLOChartFile)
	p := newPanel("SLO attainment", "level", "% of requests")
	p.Y.Max = 100
	cells := cellIndex(rows)
	var loads []string
	at := map[string]int{}
	for _, r := range rows {
		if l := loadLabel(r); !math.IsNaN(r.SLOAttainmentPct) && !slices.Contains(loads, l) {
			at[l] = len(loads)
			loads = append(loads, l)
		}
	}
	width := vg.Points(12)
	seen := map[int]bool{}
	for _, r := range rows {
		if math.IsNaN(r.SLOAttainmentPct) {
			continue
		}
		c := cells[r.CellID]
		bar, err := plotter.NewBarChart(plotter.Values{r.SLOAttainmentPct}, width)
		if err != nil {
			continue
		}
		bar.Color, bar.LineStyle.Width = seriesColor(c), 0
		bar.XMin = float64(at[loadLabel(r)])
		bar.Offset = width * vg.Length(float64(c)-float64(len(cells)-1)/2)
		p.Add(bar)
		if !seen[c] {
			seen[c] = true
			f.legend.Add(cellLabel(r), bar)
			f.entries++
		}
	}
	if len(loads) > 0 {
		p.NominalX(loads...)
		f.panels = [][]*plot.Plot{{p}}
	}
	return f.orNil()
}

// loadLabel names a level's load: "c4" closed loop, "2 req/s" open loop, "replay" (or
// "replay c4", with a cap on requests in flight) a trace replay.
func loadLabel(r ledger.Row) string {
	switch {
	case r.RequestRate > 0:
		return ledger.FormatFloat(r.RequestRate) + " req/s"
	case replayed(r) && r.Concurrency == 0:
		return "replay"
	case replayed(r):
		return fmt.Sprintf("replay c%d", r.Concurrency)
	}
	return fmt.Sprintf("c%d", r.Concurrency)
}

type namedXYs struct {
	name string
	cell int // colour index
	xys  plotter.XYs
	rows []ledger.Row // the rows behind the points, in the same order
}

// cellIndex numbers cells in first-seen order, which fixes each cell's colour.
func cellIndex(rows []ledger.Row) map[string]int {
	idx := map[string]int{}
	for _, r := range rows {
		if _, ok := idx[r.CellID]; !ok {
			idx[r.CellID] = len(idx)
		}
	}
	return idx
}

func scaled(f func(ledger.Row) float64, scale float64) func(ledger.Row) float64 {
	return func(r ledger.Row) float64 { return f(r) * scale }
}

// cellSeries groups the measured (x, y) of the rows that have the load axis by cell,
// in first-seen order, each sorted by x.
func cellSeries(rows []ledger.Row, cells map[string]int, has func(ledger.Row) bool, x, y func(ledger.Row) float64) []namedXYs {
	var out []namedXYs
	index := map[string]int{}
	for _, r := range rows {
		if !has(r) || !finite(x(r)) || !finite(y(r)) {
			continue
		}
		i, ok := index[r.CellID]
		if !ok {
			i = len(out)
			index[r.CellID] = i
			out = append(out, namedXYs{name: cellLabel(r), cell: cells[r.CellID]})
		}
		out[i].rows = append(out[i].rows, r)
	}
	for i := range out {
		s := &out[i]
		slices.SortStableFunc(s.rows, func(a, b ledger.Row) int { return cmp.Compare(x(a), x(b)) })
		s.xys = make(plotter.XYs, len(s.rows))
		for j, r := range s.rows {
			s.xys[j] = plotter.XY{X: x(r), Y: y(r)}
		}
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// addBand shades p50..p99 of one cell: a polygon over two or more points, a thick
// faint bar at a single point.
func addBand(p *plot.Plot, cell int, p50 plotter.XYs, p99 []namedXYs) {
	if len(p99) == 0 {
		return
	}
	hi := map[float64]float64{}
	for _, xy := range p99[0].xys {
		hi[xy.X] = xy.Y
	}
	var lower, upper plotter.XYs
	for _, xy := range p50 {
		if y, ok := hi[xy.X]; ok {
			lower = append(lower, xy)
			upper = append(upper, plotter.XY{X: xy.X, Y: y})
		}
	}
	if len(lower) == 1 {
		l, err := plotter.NewLine(plotter.XYs{lower[0], upper[0]})
		if err == nil {
			l.Color, l.Width = bandColor(cell), vg.Points(8)
			p.Add(l)
		}
		return
	}
	if len(lower) == 0 {
		return
	}
	slices.Reverse(upper)
	poly, err := plotter.NewPolygon(append(lower, upper...))
	if err == nil {
		poly.Color, poly.LineStyle.Width = bandColor(cell), 0
		p.Add(poly)
	}
}

// cellLabel names a cell in a legend by what differs between cells.
func cellLabel(r ledger.Row) string {
	l := strings.Join(strings.Fields(strings.Join([]string{r.Model, r.Quantization, r.Tool, r.Hardware, r.Workload}, " ")), " ")
	if l == "" {
		return r.CellID
	}
	return l
}

// figure is one image: a title, rows of panels, and one legend for all of them, drawn
// in a strip of its own below the panels so it never covers a line.
type figure struct {
	title, file string
	panels      [][]*plot.Plot
	legend      plot.Legend
	entries     int
	inLegend    map[string]bool
}

func newFigure(title, file string) *figure {
	l := plot.NewLegend()
	l.TextStyle = sans(l.TextStyle)
	l.Top, l.Left = true, true // entries read from the strip's top left
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(32) // long enough to show a dashed line's pattern
	return &figure{title: title, file: file, legend: l, inLegend: map[string]bool{}}
}

func (f *figure) orNil() *figure {
	if len(f.panels) == 0 {
		return nil
	}
	return f
}

func newPanel(title, x, y string) *plot.Plot {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Min = 0 // latency, throughput and memory read honestly from zero
	p.Add(plotter.NewGrid())
	return p
}

// line adds a series as a line with points, in its cell's colour, and names it once in
// the figure's legend.
func (f *figure) line(p *plot.Plot, s namedXYs) {
	line, points, err := plotter.NewLinePoints(s.xys)
	if err != nil {
		return
	}
	line.LineStyle = seriesLine(s.cell)
	points.Color, points.Shape = seriesColor(s.cell), plotutil.Shape(s.cell)
	p.Add(line, points)
	if !f.inLegend[s.name] {
		f.inLegend[s.name] = true
		f.legend.Add(s.name, line, points)
		f.entries++
	}
}

// seriesLine is a cell's line: its colour and a dash pattern of its own, so lines that
// lie on each other still tell apart where one is hidden (beside the marker shapes).
func seriesLine(cell int) draw.LineStyle {
	return draw.LineStyle{Color: seriesColor(cell), Width: vg.Points(1.5), Dashes: plotutil.Dashes(cell)}
}

// headroom leaves 5% above the highest point, so a line or band at the maximum is not
// drawn on the panel's edge (an SLO panel already ends at 100%), and 5% right of the
// last, so the last point and its label are not on the panel's right edge.
func headroom(p *plot.Plot) {
	if p.Y.Max > p.Y.Min && p.Y.Max != 100 {
		p.Y.Max += (p.Y.Max - p.Y.Min) / 20
	}
	if p.X.Max > p.X.Min {
		p.X.Max += (p.X.Max - p.X.Min) / 20
	}
}

// Panel size and margins of a figure, in points.
const (
	panelW, panelH = 4 * vg.Inch, 3 * vg.Inch
	figurePad      = 8
)

// render draws the figure as "svg" or "png".
func (f *figure) render(format string) ([]byte, error) {
	cols := 0
	for _, row := range f.panels {
		cols = max(cols, len(row))
	}
	grid := make([][]*plot.Plot, len(f.panels))
	for i, row := range f.panels {
		grid[i] = append(append([]*plot.Plot(nil), row...), make([]*plot.Plot, cols-len(row))...)
	}
	titleStyle := newPlot().Title.TextStyle
	titleStyle.Font.Size = vg.Points(13)
	titleStyle.XAlign, titleStyle.YAlign = text.XLeft, text.YTop
	titleH := titleStyle.Height(f.title) + 2*figurePad
	legendH := f.legend.Rectangle(draw.Canvas{}).Size().Y + 2*figurePad
	// Room for the title and legend at a quarter more than their width: a browser without
	// the Liberation fonts draws the SVG's text in a wider one.
	text := max(titleStyle.Width(f.title), f.legend.Rectangle(draw.Canvas{}).Size().X)
	w := max(vg.Length(cols)*panelW, text*5/4+2*figurePad)
	h := vg.Length(len(grid))*panelH + titleH + legendH
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", f.title, err)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc.FillText(titleStyle, vg.Point{X: figurePad, Y: h - figurePad}, f.title)
	f.legend.Draw(draw.Crop(dc, figurePad, -figurePad, figurePad, -(h - legendH)))
	plotArea := draw.Crop(dc, 0, 0, legendH, -titleH)
	tiles := draw.Tiles{Rows: len(grid), Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(12)}
	canvases := plot.Align(grid, tiles, plotArea)
	for i, row := range grid {
		for j, p := range row {
			if p != nil {
				headroom(p)
				p.Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart %s: %w", f.title, err)
	}
	return buf.Bytes(), nil
}
