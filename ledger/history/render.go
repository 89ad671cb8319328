package history

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/planrun/planrun/internal/mdtable"
)

// DefaultFields are the figures history shows when not told otherwise.
var DefaultFields = []string{"ttft_p50_s", "ttft_p99_s", "tpot_p50_ms", "output_tok_s"}

// sparks are the eight heights of a sparkline.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws values between their own minimum and maximum; a value not measured
// is a space.
func Sparkline(vals []float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range finite(vals) {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range vals {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			b.WriteRune(' ')
		case hi == lo:
			b.WriteRune(sparks[len(sparks)/2])
		default:
			b.WriteRune(sparks[int((v-lo)/(hi-lo)*float64(len(sparks)-1)+0.5)])
		}
	}
	return b.String()
}

// envColumns are the environment columns of the table and the CSV, with their reader.
var envColumns = []struct {
	name string
	get  func(p *Point) string
}{
	{"date", func(p *Point) string { return p.Started.UTC().Format(time.RFC3339) }},
	{"run_id", func(p *Point) string { return p.RunID }},
	{"planrun_version", func(p *Point) string { return p.Env.PlanrunVersion }},
	{"plan_hash", func(p *Point) string { return short(p.Env.PlanHash) }},
	{"server_version", func(p *Point) string { return p.Env.ServerVersion }},
	{"model_digest", func(p *Point) string { return short(p.Env.ModelDigest) }},
	{"gpu_driver", func(p *Point) string { return strings.Trim(p.Env.GPU+" "+p.Env.Driver, " ") }},
	{"host", func(p *Point) string { return p.Env.Host }},
}

// changeList is a point's environment changes in one cell of a table.
func changeList(p *Point) string {
	return strings.Join(Phrases(p.Changes, ""), "; ")
}

// WriteText writes each series as a table (one line per run, with its environment and
// the fields, and the environment changes from the run before), then a sparkline and a
// trend verdict per field.
func WriteText(w io.Writer, series []Series, fields []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s (plan %s): %d runs\n", s.Key, s.Key.Plan, len(s.Points))
		var head []string
		for _, c := range envColumns {
			head = append(head, strings.ToUpper(c.name))
		}
		head = append(append(head, fields...), "CHANGES")
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		cols := s.Columns(fields)
		for j := range s.Points {
			p := &s.Points[j]
			var cells []string
			for _, c := range envColumns {
				cells = append(cells, mdtable.Dash(c.get(p)))
			}
			for _, col := range cols {
				cells = append(cells, FormatValue(col[j]))
			}
			cells = append(cells, changeList(p))
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		tw.Flush()
		for _, t := range s.Trends(fields) {
			fmt.Fprintf(w, "  %-14s %s  %s\n", t.Field, Sparkline(s.Values(t.Field)), t.describe())
		}
	}
	return tw.Flush()
}

func (t Trend) describe() string {
	switch t.Verdict {
	case TooFewRuns:
		return fmt.Sprintf("%s (a trend needs %d)", t.Verdict, MinTrendPoints)
	case TooFewRequests:
		return fmt.Sprintf("%s (%+.1f%%, but %s needs %d successful requests a row, as compare judges it; the fewest here are %d)",
			t.Verdict, t.Change, t.Field, t.Need, t.Have)
	}
	return fmt.Sprintf("%s %+.1f%% (last third against first, run-to-run noise ±%.1f%%)", t.Verdict, t.Change, t.Noise)
}

// FormatValue writes a figure with 4 significant digits, "—" when not measured.
func FormatValue(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Number is a figure for JSON: nil (null) when not measured, as JSON has no NaN.
func Number(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

type jsonTrend struct {
	Field   string   `json:"field"`
	Unit    string   `json:"unit,omitempty"`
	Verdict string   `json:"verdict"`
	Change  *float64 `json:"change_pct"`
	Noise   *float64 `json:"noise_pct"`
}

// WriteJSON writes one object: the notes, and every series with its points (run,
// start, environment, changes, the fields) and a trend per field.
func WriteJSON(w io.Writer, series []Series, fields []string, notes []string) error {
	type point struct {
		Point
		Status  string              `json:"status"`
		Figures map[string]*float64 `json:"figures"`
	}
	type jsonSeries struct {
		Key    Key         `json:"key"`
		Points []point     `json:"points"`
		Trends []jsonTrend `json:"trends"`
	}
	out := struct {
		Notes  []string     `json:"notes"`
		Series []jsonSeries `json:"series"`
	}{Notes: append([]string{}, notes...), Series: []jsonSeries{}}
	for _, s := range series {
		js := jsonSeries{Key: s.Key}
		cols := s.Columns(fields)
		for j, p := range s.Points {
			jp := point{Point: p, Status: p.Row.Status, Figures: map[string]*float64{}}
			for i, f := range fields {
				jp.Figures[f] = Number(cols[i][j])
			}
			js.Points = append(js.Points, jp)
		}
		for _, t := range s.Trends(fields) {
			js.Trends = append(js.Trends, jsonTrend{t.Field, t.Unit, t.Verdict, Number(t.Change), Number(t.Noise)})
		}
		out.Series = append(out.Series, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteCSV writes one line per point: the series key, the environment, the changes
// from the point before and the fields (empty when not measured).
func WriteCSV(w io.Writer, series []Series, fields []string) error {
	cw := csv.NewWriter(w)
	head := []string{"plan", "cell_id", "concurrency", "request_rate_per_s", "key_extra"}
	for _, c := range envColumns {
		head = append(head, c.name)
	}
	head = append(append(head, "cuda", "dataset", "changes"), fields...)
	cw.Write(head)
	for _, s := range series {
		cols := s.Columns(fields)
		for j := range s.Points {
			p := &s.Points[j]
			rec := []string{s.Key.Plan, s.Key.Cell, strconv.Itoa(s.Key.Concurrency),
				strconv.FormatFloat(s.Key.RequestRate, 'g', -1, 64), s.Key.Extra}
			for _, c := range envColumns {
				rec = append(rec, c.get(p))
			}
			rec = append(rec, p.Env.CUDA, p.Env.Dataset, changeList(p))
			for _, col := range cols {
				v := col[j]
				if math.IsNaN(v) || math.IsInf(v, 0) {
					rec = append(rec, "")
				} else {
					rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
				}
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// The formats WriteJudgements writes.
const (
	FormatText     = "text"     // a table aligned with tabs
	FormatMarkdown = "markdown" // a Markdown table
	FormatJSON     = "json"     // one indented JSON object
)

// WriteJudgements writes the verdicts of run runID against its rolling baseline in
// format (FormatText, FormatMarkdown or FormatJSON).
func WriteJudgements(w io.Writer, js []Judgement, runID, format string) error {
	if format == FormatJSON {
		type jsonJudgement struct {
			Cell     string      `json:"cell"`
			Figure   string      `json:"figure"`
			Verdict  Verdict     `json:"verdict"`
			Value    *float64    `json:"value"`
			Median   *float64    `json:"baseline_median"`
			Band     *float64    `json:"noise_band"`
			Change   *float64    `json:"change_pct"`
			Baseline []string    `json:"baseline_runs"`
			Changes  []EnvChange `json:"environment_changes"`
			Message  string      `json:"message"`
		}
		out := struct {
			Run        string          `json:"run"`
			Judgements []jsonJudgement `json:"judgements"`
		}{Run: runID, Judgements: []jsonJudgement{}}
		for _, j := range js {
			out.Judgements = append(out.Judgements, jsonJudgement{j.Key.String(), j.Asked, j.Verdict, Number(j.Value), Number(j.Median),
				Number(j.Band), Number(j.Change), j.Baseline, j.Changes, j.String()})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	sep, head := "\t", "CELL\tFIGURE\tRUN\tBASELINE MEDIAN\tCHANGE\tNOISE BAND\tVERDICT\tCHANGES"
	if format == FormatMarkdown {
		sep, head = " | ", "| cell | figure | run | baseline median | change | noise band | verdict | changes |\n|---|---|---|---|---|---|---|---|"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Run %s against each cell's rolling baseline:\n%s\n", runID, head)
	for _, j := range js {
		cells := []string{j.Key.String(), j.Asked, "—", "—", "—", "—", string(j.Verdict), ""}
		if j.Verdict != Insufficient {
			cells[1] = j.Field
			cells[2], cells[3] = FormatValue(j.Value), FormatValue(j.Median)
			cells[4], cells[5] = fmt.Sprintf("%+.1f%%", j.Change), fmt.Sprintf("±%.1f%%", j.Band/math.Abs(j.Median)*100)
			cells[7] = j.Explain
		}
		line := strings.Join(cells, sep)
		if format == FormatMarkdown {
			line = "| " + line + " |"
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
