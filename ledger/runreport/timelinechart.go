package runreport

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// TimelineChartFile is the chart of what happened inside each level's window.
const TimelineChartFile = "timeline.svg"

// TimelineSeries is one level's timeline for the chart: each measured run's slices
// (timeline.csv's), labelled by cell and level.
type TimelineSeries struct {
	Label string
	Runs  [][]TimelinePoint
}

// TimelinePoint is one slice: its middle, in seconds after the run's first start, its
// output tok/s and its mean requests in flight.
type TimelinePoint struct {
	Seconds, TokS, InFlight float64
	Steady                  bool
}

// timelineLevels bounds the levels the chart draws: a strip of two small panels each.
const timelineLevels = 12

// timelineFigure: a strip per level, output tok/s and requests in flight over the
// window, a line per run; the steady window's slices are marked on the tok/s line.
func timelineFigure(levels []TimelineSeries) *figure {
	f := newFigure("Inside each level's window: output tok/s and requests in flight over time (a line per run; dots: the steady window)",
		TimelineChartFile)
	for _, lv := range levels[:min(len(levels), timelineLevels)] {
		tok := newPanel(lv.Label+": output tok/s", "seconds since the run's first request", "tok/s")
		fl := newPanel(lv.Label+": in flight", "seconds since the run's first request", "requests")
		drawn := false
		for run, pts := range lv.Runs {
			var xyTok, xySteady, xyFl plotter.XYs
			for _, p := range pts {
				if !math.IsNaN(p.TokS) {
					xyTok = append(xyTok, plotter.XY{X: p.Seconds, Y: p.TokS})
					if p.Steady {
						xySteady = append(xySteady, plotter.XY{X: p.Seconds, Y: p.TokS})
					}
				}
				if !math.IsNaN(p.InFlight) {
					xyFl = append(xyFl, plotter.XY{X: p.Seconds, Y: p.InFlight})
				}
			}
			if len(xyTok) < 2 {
				continue
			}
			drawn = true
			name := fmt.Sprintf("run %d", run+1)
			addLine(tok, xyTok, run)
			addLine(fl, xyFl, run)
			if sc, err := plotter.NewScatter(xySteady); err == nil && len(xySteady) > 0 {
				sc.Color, sc.Radius = seriesColor(run), 1.5
				tok.Add(sc)
			}
			if !f.inLegend[name] {
				if l, err := plotter.NewLine(xyTok); err == nil {
					l.LineStyle = seriesLine(run)
					f.inLegend[name] = true
					f.legend.Add(name, l)
					f.entries++
				}
			}
		}
		if drawn {
			f.panels = append(f.panels, []*plot.Plot{tok, fl})
		}
	}
	return f.orNil()
}

// addLine draws xys on p in run's colour, without points (a slice every 100 ms makes
// markers a smear).
func addLine(p *plot.Plot, xys plotter.XYs, run int) {
	if l, err := plotter.NewLine(xys); err == nil {
		l.LineStyle = seriesLine(run)
		l.LineStyle.Width /= 1.5
		p.Add(l)
	}
}

// WriteTimelineCharts writes the timeline chart into dir as SVG and PNG (none without a
// timeline of two slices), for Report.Charts.
func WriteTimelineCharts(dir string, levels []TimelineSeries) ([]Chart, error) {
	if f := timelineFigure(levels); f != nil {
		return writeFigures(dir, []*figure{f})
	}
	return nil, nil
}
