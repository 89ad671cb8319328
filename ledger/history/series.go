package history

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
)

// Key makes rows one series: the plan, the cell (its id names model, quantization,
// tool, hardware and workload, as its matrix does) and the level, plus the environment
// fields a user adds to compare like with like only (Extra: "server_version=0.9.2").
// A cell renamed between runs is another key: a new series, never merged silently.
type Key struct {
	Plan        string  `json:"plan"`
	Cell        string  `json:"cell"`
	Concurrency int     `json:"concurrency"`
	RequestRate float64 `json:"request_rate,omitempty"`
	Extra       string  `json:"extra,omitempty"`
}

func (k Key) String() string {
	s := k.Cell + " c=" + strconv.Itoa(k.Concurrency)
	if k.RequestRate > 0 {
		s += " rate=" + strconv.FormatFloat(k.RequestRate, 'g', -1, 64)
	}
	if k.Extra != "" {
		s += " [" + k.Extra + "]"
	}
	return s
}

// KeyOf is the row's series key with the named environment fields added.
func KeyOf(row ledger.Row, env Env, fields []string) Key {
	k := Key{Plan: row.Plan, Cell: row.CellID, Concurrency: row.Concurrency, RequestRate: row.RequestRate}
	var extra []string
	for _, f := range fields {
		v, _ := env.Get(f)
		extra = append(extra, f+"="+v)
	}
	k.Extra = strings.Join(extra, ",")
	return k
}

// CheckKeyFields says which name is not an environment field.
func CheckKeyFields(fields []string) error {
	for _, f := range fields {
		if _, ok := (Env{}).Get(f); !ok {
			return fmt.Errorf("no environment field %q; fields: %s", f, strings.Join(EnvFields(), ", "))
		}
	}
	return nil
}

// Point is one measured row of a series.
type Point struct {
	RunID   string     `json:"run_id"`
	Started time.Time  `json:"started"`
	Env     Env        `json:"environment"`
	Row     ledger.Row `json:"-"`
	// Changes are the environment changes from the series' previous point.
	Changes []EnvChange `json:"changes,omitempty"`
}

// Series is one cell and level's measured rows, oldest first.
type Series struct {
	Key    Key     `json:"key"`
	Points []Point `json:"points"`
}

// Options select series.
type Options struct {
	// Cells are globs over the cell id, as -only reads them (* spans "/"), or over a
	// series' heading, the cell id and its level ("*c=2*"); empty: every cell.
	Cells     []string
	Since     time.Time // points of runs started before it are left out
	KeyFields []string  // environment fields added to the key
}

func (o Options) cellMatches(cell string) bool {
	if len(o.Cells) == 0 {
		return true
	}
	return plan.MatchCellGlobs(o.Cells, cell)
}

// HeadingGlob reports whether a -cell glob is of a series' heading, its level included
// ("*c=2*", "* rate=*"), rather than of the cell id (which never holds a space or "=").
func HeadingGlob(g string) bool { return strings.ContainsAny(g, " =") }

// Build groups the set's measured rows (status ok) into series, in the order their
// cells first appear. Rows that failed or were interrupted are not points: they
// measured nothing to hold a trend against.
func Build(s *Set, o Options) []Series {
	var out []Series
	at := map[Key]int{}
	matches := map[string]bool{} // by heading: a glob is compiled once a cell and level, not once a row
	for _, run := range s.Runs {
		if !o.Since.IsZero() && run.Started.Before(o.Since) {
			continue
		}
		for ri, row := range run.Rows {
			if row.Status != ledger.StatusOK {
				continue
			}
			// The heading history prints: a glob of it ("*c=2*") matches too.
			head := Key{Cell: row.CellID, Concurrency: row.Concurrency, RequestRate: row.RequestRate}.String()
			m, ok := matches[head]
			if !ok {
				m = o.cellMatches(row.CellID) || o.cellMatches(head)
				matches[head] = m
			}
			if !m {
				continue
			}
			env := run.Env(ri)
			k := KeyOf(row, env, o.KeyFields)
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, Series{Key: k})
			}
			p := Point{RunID: run.ID, Started: run.Started, Env: env, Row: row}
			if n := len(out[i].Points); n > 0 {
				p.Changes = Diff(out[i].Points[n-1].Env, env)
			}
			out[i].Points = append(out[i].Points, p)
		}
	}
	return out
}

// Renamed says of each series that begins after another of the same plan and level
// ended, and measures the same model, quantization, tool, hardware and workload, that
// it may be that cell renamed: it is shown as a new cell, not merged.
func Renamed(series []Series) []string {
	var notes []string
	for _, b := range series {
		for _, a := range series {
			if a.Key == b.Key || a.Key.Plan != b.Key.Plan || a.Key.Concurrency != b.Key.Concurrency ||
				a.Key.RequestRate != b.Key.RequestRate || a.Key.Extra != b.Key.Extra {
				continue
			}
			last, first := a.Points[len(a.Points)-1], b.Points[0]
			ra, rb := last.Row, first.Row
			same := ra.Model == rb.Model && ra.Quantization == rb.Quantization && ra.Tool == rb.Tool &&
				ra.Hardware == rb.Hardware && ra.Workload == rb.Workload
			if same && !first.Started.Before(last.Started) && a.Key.Cell != b.Key.Cell {
				notes = append(notes, fmt.Sprintf("cell %s first appears in run %s, after cell %s (same model, tool, hardware and workload) last appeared in run %s: a renamed cell is a new cell, not merged",
					b.Key.Cell, first.RunID, a.Key.Cell, last.RunID))
			}
		}
	}
	return notes
}

// Values are the series' values of a figure, one per point (NaN where not measured).
func (s Series) Values(field string) []float64 {
	out := make([]float64, len(s.Points))
	for i := range s.Points {
		out[i], _, _ = compare.FigureValue(field, &s.Points[i].Row)
	}
	return out
}

// Columns are the series' Values of each field, read once: a table's line per point
// reads them all, and a Values call a cell made a 10,000-run history quadratic.
func (s Series) Columns(fields []string) [][]float64 {
	out := make([][]float64, len(fields))
	for i, f := range fields {
		out[i] = s.Values(f)
	}
	return out
}

// HigherIsBetter reports whether a rise in the figure is an improvement: throughput,
// goodput and SLO attainment; for latencies, memory and error counts a rise is worse.
func HigherIsBetter(field string) bool {
	for _, s := range []string{"tok_s", "requests_s", "slo_attainment_pct"} {
		if strings.HasSuffix(field, s) {
			return true
		}
	}
	return false
}

// Trend verdicts.
const (
	Better = "better"
	Worse  = "worse"
	Flat   = "flat"
	// TooFewRuns is the verdict of a series too short to tell a trend from noise.
	TooFewRuns = "too few runs"
	// TooFewRequests is the verdict on a figure its runs had too few requests to
	// resolve: a p99 of 24 requests is their largest value, which compare will not
	// judge either (compare.RequestsToConclude: p99 needs 368).
	TooFewRequests = "too few requests"
)

// MinTrendPoints is the shortest series a trend is judged on.
const MinTrendPoints = 4

// Trend is a figure's movement over a series.
type Trend struct {
	Field   string  `json:"field"`
	Unit    string  `json:"unit,omitempty"`
	Verdict string  `json:"verdict"`
	Change  float64 `json:"change_pct"` // median of the last third against the first third, %
	Noise   float64 `json:"noise_pct"`  // run-to-run noise (robust σ), % of the first third's median
	// Have and Need are, for TooFewRequests, the fewest successful requests of a row of
	// the series and the requests the figure needs.
	Have int `json:"requests_have,omitempty"`
	Need int `json:"requests_need,omitempty"`
}

// TrendOf judges a figure's values (oldest first): the median of the last third
// against the median of the first third, which counts as better or worse only when the
// move is beyond 3 times the run-to-run noise. The noise is the robust σ of successive
// differences (1.4826 × their median absolute value / √2), so one step in the series
// (a server upgrade) does not inflate it.
func TrendOf(field string, vals []float64) Trend {
	_, unit, _ := compare.FigureValue(field, &ledger.Row{})
	t := Trend{Field: field, Unit: unit, Verdict: TooFewRuns, Change: math.NaN(), Noise: math.NaN()}
	v := finite(vals)
	if len(v) < MinTrendPoints {
		return t
	}
	third := (len(v) + 2) / 3
	first, last := stats.Median(v[:third]), stats.Median(v[len(v)-third:])
	var diffs []float64
	for i := 1; i < len(v); i++ {
		diffs = append(diffs, math.Abs(v[i]-v[i-1]))
	}
	sigma := 1.4826 * stats.Median(diffs) / math.Sqrt2
	if first != 0 {
		t.Change = (last - first) / math.Abs(first) * 100
		t.Noise = sigma / math.Abs(first) * 100
	}
	move := last - first
	t.Verdict = Flat
	if math.Abs(move) > 3*sigma && math.Abs(move) > noiseFloor*math.Abs(first) {
		t.Verdict = Worse
		if (move > 0) == HigherIsBetter(field) {
			t.Verdict = Better
		}
	}
	return t
}

// Trends judges each field over the series: by TrendOf, unless a run of the series had
// too few successful requests to resolve the figure (as compare counts them), when the
// verdict is TooFewRequests rather than a better or worse that is noise.
func (s Series) Trends(fields []string) []Trend {
	out := make([]Trend, len(fields))
	for i, f := range fields {
		out[i] = TrendOf(f, s.Values(f))
		if out[i].Verdict == TooFewRuns {
			continue
		}
		need, have := compare.RequestsToConclude(f), math.MaxInt
		for _, p := range s.Points {
			have = min(have, p.Row.Succeeded)
		}
		if have < need {
			out[i].Verdict, out[i].Have, out[i].Need = TooFewRequests, have, need
		}
	}
	return out
}

// noiseFloor is the smallest relative move judged beyond noise however steady the
// figure was: a figure the same to the microsecond in every run has σ 0, and reruns on
// one machine move a steady median by a few percent (timer, scheduler, CPU clock; 2%
// in 1 of 23 runs against the mock server on a shared 2-core machine).
const noiseFloor = 0.05

func finite(vals []float64) []float64 {
	var out []float64
	for _, x := range vals {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}
