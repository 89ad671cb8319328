package report

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Chart is an image written beside the report; File is relative to the report's folder.
type Chart struct {
	Title string
	File  string
}

// VRAMPoint is one NVML sample: seconds since the cell started, GB in use.
type VRAMPoint struct {
	Seconds float64
	GB      float64
}

// VRAMSeries is the VRAM-over-time trace of one cell (from the gpu sampler).
type VRAMSeries struct {
	Label  string
	Points []VRAMPoint
}

// Chart file names, fixed so the Markdown links stay valid as the report is re-rendered.
const (
	TTFTChartFile       = "ttft_p50_vs_concurrency.svg"
	ThroughputChartFile = "throughput_vs_concurrency.svg"
	VRAMChartFile       = "vram_over_time.svg"
)

// WriteCharts writes SVG charts into dir: TTFT p50 and throughput against concurrency,
// one line per cell, and VRAM over time when series are given. A chart with no measured
// point is not written. It returns the charts written, for Report.Charts.
func WriteCharts(dir string, rows []Row, vram []VRAMSeries) ([]Chart, error) {
	var charts []Chart
	x := xAxis(rows)
	for _, c := range []struct {
		title, file, y string
		value          func(Row) float64
	}{
		{"TTFT p50 against " + x, TTFTChartFile, "TTFT p50 (s)", func(r Row) float64 { return r.TTFT.P50 }},
		{"Output throughput against " + x, ThroughputChartFile, "output tokens/s", func(r Row) float64 { return r.OutputTokS }},
	} {
		series := byCell(rows, c.value)
		if len(series) == 0 {
			continue
		}
		if err := savePlot(filepath.Join(dir, c.file), c.title, x, c.y, series); err != nil {
			return charts, err
		}
		charts = append(charts, Chart{Title: c.title, File: c.file})
	}
	var vs []namedXYs
	for _, s := range vram {
		var xy plotter.XYs
		for _, p := range s.Points {
			if !math.IsNaN(p.GB) {
				xy = append(xy, plotter.XY{X: p.Seconds, Y: p.GB})
			}
		}
		if len(xy) > 0 {
			vs = append(vs, namedXYs{s.Label, xy})
		}
	}
	if len(vs) > 0 {
		title := "VRAM in use over time"
		if err := savePlot(filepath.Join(dir, VRAMChartFile), title, "seconds", "GB", vs); err != nil {
			return charts, err
		}
		charts = append(charts, Chart{Title: title, File: VRAMChartFile})
	}
	return charts, nil
}

type namedXYs struct {
	name string
	xys  plotter.XYs
}

// xAxis names the charts' x axis: the request rate when any level ran open loop (the
// load it was driven by), else the concurrency.
func xAxis(rows []Row) string {
	for _, r := range rows {
		if r.RequestRate > 0 {
			return "request rate (requests/s; closed-loop levels at their concurrency)"
		}
	}
	return "concurrency"
}

// byCell groups measured values by cell, in first-seen order, sorted by x: the request
// rate of an open-loop level (one series per cell and concurrency cap), else the
// concurrency.
func byCell(rows []Row, value func(Row) float64) []namedXYs {
	var out []namedXYs
	index := map[string]int{}
	for _, r := range rows {
		v := value(r)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		key, name, x := r.CellID, cellLabel(r), float64(r.Concurrency)
		if r.RequestRate > 0 {
			key, x = fmt.Sprintf("%s c=%d", r.CellID, r.Concurrency), r.RequestRate
			name = fmt.Sprintf("%s, at most %d in flight", name, r.Concurrency)
		}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, namedXYs{name: name})
		}
		out[i].xys = append(out[i].xys, plotter.XY{X: x, Y: v})
	}
	for _, s := range out {
		slices.SortStableFunc(s.xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	}
	return out
}

// cellLabel names a cell in a legend by what differs between cells.
func cellLabel(r Row) string {
	l := strings.Join(strings.Fields(strings.Join([]string{r.Model, r.Quantization, r.Tool, r.Hardware, r.Workload}, " ")), " ")
	if l == "" {
		return r.CellID
	}
	return l
}

func savePlot(path, title, x, y string, series []namedXYs) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Min = 0 // latency and throughput read honestly from zero
	p.Add(plotter.NewGrid())
	for i, s := range series {
		line, points, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return fmt.Errorf("chart %s: %w", title, err)
		}
		line.Color = plotutil.Color(i)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
	}
	p.Legend.Top = true
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("write chart %s: %w", path, err)
	}
	return nil
}
