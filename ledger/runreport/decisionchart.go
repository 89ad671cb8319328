package runreport

import (
	"cmp"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/planrun/planrun/ledger"
)

// DecisionChartPrefix starts the file name of each decision's chart
// ("decision-pick.svg"): the reports show it under the decision, not among the charts.
const DecisionChartPrefix = "decision-"

// perUserSpeed is the x axis of a decision's chart when no constraint is a floor on
// another figure: each request's own decode rate, what one user sees, against which a
// level's throughput is bought.
const perUserSpeed = "decode_tok_s"

// perUserFigures start the names of the figures one request sees (its latency, its
// decode rate): an objective on one of them is charted against throughput instead, the
// other side of the same trade-off (a TPOT against the decode rate is one figure twice).
var perUserFigures = []string{"ttft_", "tpot_", "itl_", "e2e_", "decode_"}

// decisionAxis is the figure a decision's chart puts the rows against: the first floor
// (>=, >) the decision sets on a figure other than its objective and SLO attainment (a
// quality floor: same-top-1 rate, accuracy), else the per-user decode rate, or the
// level's throughput when the objective is itself a per-user figure.
func decisionAxis(d ledger.Decision) string {
	for _, c := range d.Constraints {
		if (c.Op == ">=" || c.Op == ">") && c.Field != d.Objective.Field && c.Field != "slo_attainment_pct" {
			return c.Field
		}
	}
	for _, p := range perUserFigures {
		if strings.HasPrefix(d.Objective.Field, p) {
			return "output_tok_s"
		}
	}
	return perUserSpeed
}

// decisionPoint is one candidate on the chart.
type decisionPoint struct {
	c    ledger.Candidate
	x, y float64
}

// decisionFigure plots every candidate of d with both figures measured: the objective
// (with its interval) against decisionAxis, the frontier (no other eligible row better
// on both) as a dashed line, the chosen row and the runner-up labelled, rows the
// constraints excluded hollow and grey. nil when fewer than two rows can be drawn.
func decisionFigure(d ledger.Decision, rows []ledger.Row) *figure {
	axis := decisionAxis(d)
	pts := decisionPoints(d, rows, axis)
	if len(pts) < 2 {
		return nil
	}
	f := newFigure(d.Name+": "+d.Objective.String()+" against "+axis+" (each point a level; dashed: the frontier)",
		DecisionChartPrefix+fileSafe(d.Name)+".svg")
	p := newPanel("", withUnit(axis), withUnit(d.Objective.Field))
	p.X.Min = 0
	logObjective(p, pts)
	f.addStatusGroups(p, pts)
	if front := frontier(pts, d.Objective.Maximize); len(front) >= 2 {
		if l, err := plotter.NewLine(front); err == nil {
			l.LineStyle = draw.LineStyle{Color: palette[0], Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(l)
			f.legend.Add("frontier", l)
		}
	}
	// The chosen row's label above its point, the runner-up's below, so two close
	// points' labels do not print over each other.
	for i, labels := range decisionLabels(d, pts) {
		if l, err := plotter.NewLabels(labels); err == nil && len(labels.XYs) > 0 {
			for j := range l.TextStyle {
				l.TextStyle[j].YAlign = [2]text.YAlignment{text.YBottom, text.YTop}[i]
			}
			l.Offset = vg.Point{Y: [2]vg.Length{vg.Points(6), vg.Points(-6)}[i]}
			p.Add(l)
		}
	}
	f.panels = [][]*plot.Plot{{p}}
	return f
}

// logObjective puts the objective on a log scale when its figures span more than 50
// times (a 1 ms TPOT beside a 900 ms one): on a linear axis the rows a decision weighs
// would sit flat on its floor.
func logObjective(p *plot.Plot, pts []decisionPoint) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range pts {
		for _, v := range []float64{pt.y, float64(pt.c.Lo), float64(pt.c.Hi)} {
			if finite(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if lo <= 0 || hi/lo < 50 {
		return
	}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
}

// decisionPoints are d's candidates whose row measured both the objective and axis.
func decisionPoints(d ledger.Decision, rows []ledger.Row, axis string) []decisionPoint {
	byKey := map[string]*ledger.Row{}
	for i := range rows {
		r := &rows[i]
		byKey[levelKey(r.CellID, r.Concurrency, r.RequestRate)] = r
	}
	var pts []decisionPoint
	for _, c := range d.Candidates {
		r := byKey[levelKey(c.Cell, c.Concurrency, float64(c.RequestRate))]
		if r == nil {
			continue
		}
		if x, y := resultFigure(r, axis), float64(c.Value); finite(x) && finite(y) {
			pts = append(pts, decisionPoint{c, x, y})
		}
	}
	return pts
}

// statusGroups are how the chart draws candidates by standing: eligible ones solid,
// excluded ones hollow and grey.
var statusGroups = []struct {
	name, status string
	color        color.RGBA
	hollow       bool
}{
	{"meets the constraints", ledger.CandidateQualified, palette[0], false},
	{"a constraint unsettled", ledger.CandidateUnsure, palette[1], false},
	{"excluded by a constraint", ledger.CandidateExcluded, palette[9], true},
}

// addStatusGroups draws the points of each standing with their objective's intervals
// as error bars, each standing once in the legend.
func (f *figure) addStatusGroups(p *plot.Plot, pts []decisionPoint) {
	for _, g := range statusGroups {
		var bars errorBars
		for _, pt := range pts {
			if pt.c.Status != g.status {
				continue
			}
			e := struct{ Low, High float64 }{}
			if lo, hi := float64(pt.c.Lo), float64(pt.c.Hi); finite(lo) && finite(hi) && lo <= pt.y && pt.y <= hi {
				e.Low, e.High = pt.y-lo, hi-pt.y
			}
			bars.XYs, bars.YErrors = append(bars.XYs, plotter.XY{X: pt.x, Y: pt.y}), append(bars.YErrors, e)
		}
		if len(bars.XYs) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(bars.XYs)
		if err != nil {
			continue
		}
		sc.Color, sc.Radius, sc.Shape = g.color, vg.Points(4), draw.GlyphDrawer(filledCircle{})
		if g.hollow {
			sc.Shape = draw.CircleGlyph{}
		}
		if eb, err := plotter.NewYErrorBars(bars); err == nil {
			eb.LineStyle = draw.LineStyle{Color: g.color, Width: vg.Points(1)}
			eb.CapWidth = vg.Points(5)
			p.Add(eb)
		}
		p.Add(sc)
		f.legend.Add(g.name, sc)
		f.entries++
	}
}

// decisionLabels name the chosen row (the first set) and the runner-up (the second) on
// the chart.
func decisionLabels(d ledger.Decision, pts []decisionPoint) [2]plotter.XYLabels {
	var labels [2]plotter.XYLabels
	for _, pt := range pts {
		i, prefix := 0, "chosen: "
		switch {
		case d.Chosen != nil && sameLevel(pt.c, *d.Chosen):
		case d.RunnerUp != nil && sameLevel(pt.c, *d.RunnerUp):
			i, prefix = 1, "runner-up: "
		default:
			continue
		}
		labels[i].XYs = append(labels[i].XYs, plotter.XY{X: pt.x, Y: pt.y})
		labels[i].Labels = append(labels[i].Labels, prefix+pt.c.Name+" "+pt.c.Level())
	}
	return labels
}

// filledCircle is a filled point: eligible rows are solid, excluded ones hollow.
type filledCircle struct{}

func (filledCircle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetColor(sty.Color)
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Fill(p)
}

// frontier are the eligible points no other eligible point beats on both figures (x
// higher, y better in the objective's direction), in order of x.
func frontier(pts []decisionPoint, maximize bool) plotter.XYs {
	better := func(a, b float64) bool { // a is better than b on the objective
		if maximize {
			return a > b
		}
		return a < b
	}
	var out plotter.XYs
	for _, p := range pts {
		if p.c.Status == ledger.CandidateExcluded {
			continue
		}
		dominated := false
		for _, q := range pts {
			if q.c.Status == ledger.CandidateExcluded {
				continue
			}
			if q.x >= p.x && !better(p.y, q.y) && (q.x > p.x || better(q.y, p.y)) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, plotter.XY{X: p.x, Y: p.y})
		}
	}
	slices.SortFunc(out, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	return out
}

func sameLevel(a, b ledger.Candidate) bool {
	return a.Cell == b.Cell && a.Concurrency == b.Concurrency && a.RequestRate == b.RequestRate
}

func levelKey(cell string, c int, rate float64) string {
	return cell + "\x00" + ledger.FormatFloat(float64(c)) + "\x00" + ledger.FormatFloat(rate)
}

// resultFigure is the row's result.* figure name, NaN when it was not measured.
func resultFigure(r *ledger.Row, name string) float64 {
	f, ok := ledger.ResultFieldNamed(name)
	if !ok {
		return math.NaN()
	}
	v := f.Value(r)
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return math.NaN()
	}
	x, _ := v.AsBigFloat().Float64()
	return x
}

// withUnit is an axis label: the figure's name and its unit.
func withUnit(field string) string {
	if u := fieldUnit(field); u != "" {
		return field + " (" + u + ")"
	}
	return field
}

// fileSafe keeps a decision's name usable in a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// DecisionCharts renders each decision's chart (see decisionFigure) as SVG, for the
// reports; WriteDecisionCharts also writes them beside the report, with PNGs.
func DecisionCharts(ds []ledger.Decision, rows []ledger.Row) ([]Chart, error) {
	return chartsOf(decisionFigures(ds, rows))
}

func decisionFigures(ds []ledger.Decision, rows []ledger.Row) []*figure {
	var figs []*figure
	for _, d := range ds {
		if f := decisionFigure(d, rows); f != nil {
			figs = append(figs, f)
		}
	}
	return figs
}

// WriteDecisionCharts writes each decision's chart into dir as SVG and PNG and returns
// them, to add to Report.Charts.
func WriteDecisionCharts(dir string, ds []ledger.Decision, rows []ledger.Row) ([]Chart, error) {
	return writeFigures(dir, decisionFigures(ds, rows))
}

// isDecisionChart reports whether a chart is a decision's, shown under its decision.
func isDecisionChart(c Chart) bool { return strings.HasPrefix(c.File, DecisionChartPrefix) }
