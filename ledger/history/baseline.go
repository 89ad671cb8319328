package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/stats"
)

// Verdict is a figure's verdict against a rolling baseline.
type Verdict string

// The verdicts of a rolling baseline.
const (
	Regressed    Verdict = "regressed"
	Improved     Verdict = "improved"
	WithinNoise  Verdict = "within noise"
	Insufficient Verdict = "insufficient data"
	// Indeterminate: the figure is beyond the noise band, but its own interval (the run's
	// sample) reaches back inside it: more requests would tell.
	Indeterminate Verdict = "indeterminate"
)

// MinBaselineRuns is the fewest earlier runs a baseline needs: the noise band is the
// baseline's own spread, and fewer than three runs have none worth the name.
const MinBaselineRuns = 3

// BaselineFigures are the figures judged when no -fail-on names any: the headline
// latencies and the throughput, each in the direction that is worse.
var BaselineFigures = []string{"ttft_p50_s", "tpot_p50_ms", "e2e_p50_s", "output_tok_s"}

// Baseline says how a run is judged against the runs before it.
type Baseline struct {
	N         int      // the last N runs of the same series before the judged run
	KeyFields []string // environment fields added to the series key
	// Thresholds name the figures judged and, beyond the noise band, how far a figure
	// must move to regress: "ttft_p99_s>+10%". Empty: BaselineFigures, in their worse
	// direction, with no limit beyond the noise band.
	Thresholds []compare.Threshold
}

// ParseLast reads "last:N".
func ParseLast(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "last:"))
	if !strings.HasPrefix(s, "last:") || err != nil || n < MinBaselineRuns {
		return 0, fmt.Errorf("%q: write last:N with N ≥ %d (the median of the cell's last N runs before this one; the noise band is their spread)", s, MinBaselineRuns)
	}
	return n, nil
}

// Judgement is one figure of one row against its baseline.
type Judgement struct {
	Key     Key
	Field   string // the figure judged (a lower percentile when the rows cannot resolve the one named)
	Asked   string // the figure the threshold (or BaselineFigures) named
	Unit    string
	Verdict Verdict
	Value   float64 // the run's
	Median  float64 // the baseline's
	Band    float64 // half-width of the noise band around the median, in the figure's unit
	Change  float64 // (Value − Median) / Median, %
	// Threshold is the -fail-on limit on the figure; nil for BaselineFigures.
	Threshold *compare.Threshold
	RunID     string
	// Baseline are the runs judged against, oldest first.
	Baseline []string
	// Changes are what differs from the first baseline run's environment to the run's;
	// From and To the consecutive runs where the latest of them came (empty without
	// changes). Explain says it in a phrase.
	Changes  []EnvChange
	From, To string
	Explain  string
	Note     string // why the data is insufficient, or the percentile used instead
}

func (j Judgement) String() string {
	if j.Verdict == Insufficient {
		return fmt.Sprintf("%s: %s: insufficient data: %s", j.Key, j.Asked, j.Note)
	}
	s := fmt.Sprintf("%s: %s %s %+.1f%% (%s against the median %s of %d runs before it, noise band ±%.1f%%)",
		j.Key, j.Field, j.Verdict, j.Change, fmtFig(j.Value, j.Unit), fmtFig(j.Median, j.Unit), len(j.Baseline), j.Band/math.Abs(j.Median)*100)
	if j.Threshold != nil {
		s += ", threshold " + j.Threshold.Text
	}
	if j.Note != "" {
		s += ", " + j.Note
	}
	if j.Verdict == Regressed || j.Verdict == Improved {
		if j.From == "" {
			return s + "; same environment as its baseline runs"
		}
		s += fmt.Sprintf("; %s, from run %s to run %s", j.Explain, j.From, j.To)
	}
	return s
}

func fmtFig(v float64, unit string) string {
	return strings.TrimSpace(strconv.FormatFloat(v, 'g', 4, 64) + " " + unit)
}

// Judge holds every measured row of the run against the median of the same series'
// last N runs before it. A row of the run with fewer than MinBaselineRuns earlier runs
// (a new cell, a renamed one, a key no earlier run shares) gets Insufficient.
func Judge(s *Set, runID string, b Baseline) ([]Judgement, error) {
	run := s.Run(runID)
	if run == nil {
		return nil, fmt.Errorf("no run %q in %s", runID, s.Dir)
	}
	before := &Set{Dir: s.Dir}
	for _, r := range s.Runs {
		if r == run {
			break
		}
		before.Runs = append(before.Runs, r)
	}
	series := map[Key]Series{}
	for _, sr := range Build(before, Options{KeyFields: b.KeyFields}) {
		series[sr.Key] = sr
	}
	var out []Judgement
	for i, row := range run.Rows {
		if row.Status != ledger.StatusOK {
			continue
		}
		env := run.Env(i)
		k := KeyOf(row, env, b.KeyFields)
		sr := series[k]
		if len(sr.Points) > b.N {
			sr.Points = sr.Points[len(sr.Points)-b.N:]
		}
		for _, t := range b.thresholds() {
			j := judgeFigure(k, row, env, run.ID, sr, t)
			if note := fidelityNote(row, sr); note != "" {
				j.Note = strings.TrimPrefix(j.Note+"; "+note, "; ")
			}
			out = append(out, j)
		}
	}
	return out, nil
}

// fidelityNote says when the judged row, or runs of its baseline, did not deliver the
// load asked (fidelity short, client-bound or late): a move may then be the client's,
// not the server's. "" when every one was ok or not judged.
func fidelityNote(row ledger.Row, sr Series) string {
	var notes []string
	if row.Fidelity != "" && row.Fidelity != ledger.FidelityOK {
		notes = append(notes, "this run's fidelity is "+row.Fidelity)
	}
	off := 0
	for _, p := range sr.Points {
		if p.Row.Fidelity != "" && p.Row.Fidelity != ledger.FidelityOK {
			off++
		}
	}
	if off > 0 {
		notes = append(notes, fmt.Sprintf("%d of its %d baseline runs' fidelity was not ok", off, len(sr.Points)))
	}
	return strings.Join(notes, ", ")
}

// thresholds are the figures judged, as thresholds; BaselineFigures get a zero limit in
// their worse direction.
func (b Baseline) thresholds() []*compare.Threshold {
	var out []*compare.Threshold
	for i := range b.Thresholds {
		out = append(out, &b.Thresholds[i])
	}
	if len(out) > 0 {
		return out
	}
	for _, f := range BaselineFigures {
		op := byte('>')
		if HigherIsBetter(f) {
			op = '<'
		}
		out = append(out, &compare.Threshold{Field: f, Op: op, Percent: true, Text: f})
	}
	return out
}

// judgeFigure judges one figure of row against the series' points: against the
// baseline's median, with the noise band of noiseBand.
func judgeFigure(k Key, row ledger.Row, env Env, runID string, sr Series, t *compare.Threshold) Judgement {
	j := Judgement{Key: k, Asked: t.Field, RunID: runID, Verdict: Insufficient}
	if t.Text != t.Field {
		j.Threshold = t
	}
	if len(sr.Points) < MinBaselineRuns {
		j.Note = fmt.Sprintf("%d earlier run(s) of this cell and level, a baseline needs %d", len(sr.Points), MinBaselineRuns)
		return j
	}
	have := row.Succeeded
	for _, p := range sr.Points {
		have = min(have, p.Row.Succeeded)
		j.Baseline = append(j.Baseline, p.RunID)
	}
	j.Field = compare.JudgedOn(t.Field, have)
	if j.Field == "" {
		j.Note = fmt.Sprintf("%d successful requests a run cannot resolve %s (it needs %d)", have, t.Field, compare.RequestsToConclude(t.Field))
		return j
	}
	if j.Field != t.Field {
		j.Note = fmt.Sprintf("judged on %s: %d successful requests a run cannot resolve %s", j.Field, have, t.Field)
	}
	var unit string
	j.Value, unit, _ = compare.FigureValue(j.Field, &row)
	j.Unit = unit
	vals := finite(sr.Values(j.Field))
	if len(vals) < MinBaselineRuns || math.IsNaN(j.Value) {
		j.Note = cmp.Or(j.Note, fmt.Sprintf("%s measured in %d of the baseline's runs and %s in this one", j.Field, len(vals), measured(j.Value)))
		return j
	}
	j.Median = stats.Median(vals)
	j.Band = noiseBand(vals, j.Median)
	j.windowChange(sr.Points, env)
	if j.Median != 0 {
		j.Change = (j.Value - j.Median) / math.Abs(j.Median) * 100
	}
	j.Verdict = WithinNoise
	move := j.Value - j.Median
	if math.Abs(move) <= j.Band {
		return j
	}
	worse := (move > 0) == (t.Op == '>')
	limitCrossed := true
	if j.Threshold != nil {
		_, limitCrossed = t.Crossed(compare.Change{A: j.Median, B: j.Value, Pct: j.Change})
	}
	switch {
	case worse && limitCrossed:
		j.Verdict = Regressed
		j.checkOwnInterval(&row, t.Op)
	case !worse:
		j.Verdict = Improved
	}
	return j
}

// checkOwnInterval turns a regression Indeterminate when the run's own interval on the
// figure reaches back inside the baseline's noise band: the run's sample cannot tell
// the move from its own noise. The note says about how many requests would settle it
// (compare's rule, on the distance from the band's edge).
func (j *Judgement) checkOwnInterval(row *ledger.Row, op byte) {
	iv, conf, ok := row.Interval(j.Field)
	if !ok {
		return // a row from before intervals: the band alone judges it
	}
	edge, near := j.Median+j.Band, iv.Lo
	if op == '<' {
		edge, near = j.Median-j.Band, iv.Hi
	}
	clears := !math.IsNaN(near) && (near-edge)*(j.Value-edge) > 0
	if clears {
		return
	}
	j.Verdict = Indeterminate
	interval := "unbounded"
	if iv.Bounded() {
		interval = fmtFig(iv.Lo, j.Unit) + "–" + fmtFig(iv.Hi, j.Unit)
	}
	note := fmt.Sprintf("beyond the noise band, but this run's own %g%% interval (%s) reaches back inside it", 100*conf, interval)
	if n := compare.RequestsToSettle(j.Value, near, edge, row.Succeeded, conf); n > 0 {
		note += fmt.Sprintf("; about %d successful requests would settle it (the run had %d)", n, row.Succeeded)
	}
	j.Note = strings.TrimPrefix(j.Note+"; "+note, "; ")
}

// windowChange sets what changed from the first baseline run to the judged run, and
// the consecutive runs where the latest change came.
func (j *Judgement) windowChange(points []Point, env Env) {
	envs, ids := []Env{}, []string{}
	for _, p := range points {
		envs, ids = append(envs, p.Env), append(ids, p.RunID)
	}
	envs, ids = append(envs, env), append(ids, j.RunID)
	j.Changes = Diff(envs[0], env)
	if len(j.Changes) == 0 {
		return
	}
	j.Explain = Explain(envs[0], env)
	for i := len(envs) - 1; i > 0; i-- {
		if len(Diff(envs[i-1], envs[i])) > 0 {
			j.From, j.To = ids[i-1], ids[i]
			return
		}
	}
}

func measured(v float64) string {
	if math.IsNaN(v) {
		return "not measured"
	}
	return "measured"
}

// Indeterminates are the judgements a gate could not settle (Indeterminate).
func Indeterminates(js []Judgement) []Judgement {
	var out []Judgement
	for _, j := range js {
		if j.Verdict == Indeterminate {
			out = append(out, j)
		}
	}
	return out
}

// Failing are the judgements that fail a gate: every regression, and the insufficient
// ones when insufficient data fails.
func Failing(js []Judgement) (regressed, insufficient []Judgement) {
	for _, j := range js {
		switch j.Verdict {
		case Regressed:
			regressed = append(regressed, j)
		case Insufficient:
			insufficient = append(insufficient, j)
		}
	}
	return regressed, insufficient
}

// noiseBand is the half-width of a 99.5% prediction interval for one more run like the
// baseline's: Student's t for its degrees of freedom × √(1 + 1/n) × its standard
// deviation, at least noiseFloor of the median. The run furthest from the median is
// left out of the spread (with 4 or more runs), so one outlying run, or the first run
// after a step, does not widen the band for the runs after it. A noisy figure must
// move further to count, and a short baseline further still.
func noiseBand(vals []float64, median float64) float64 {
	v := slices.Clone(vals)
	sort.Slice(v, func(a, b int) bool { return math.Abs(v[a]-median) < math.Abs(v[b]-median) })
	if len(v) >= 4 {
		v = v[:len(v)-1]
	}
	n := float64(len(v))
	mean := 0.0
	for _, x := range v {
		mean += x / n
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	return max(tQuantile(len(v)-1)*math.Sqrt(1+1/n)*sd, noiseFloor*math.Abs(median))
}

// tQuantile is Student's t at 0.9975 (a two-sided 99.5% interval) for df degrees of
// freedom, at the largest tabulated df not above it (so a slightly wider band between
// rows); df ≥ 30 takes df 30's.
func tQuantile(df int) float64 {
	table := []struct {
		df int
		t  float64
	}{{2, 14.09}, {3, 7.45}, {4, 5.60}, {5, 4.77}, {6, 4.32}, {7, 4.03}, {8, 3.83}, {9, 3.69}, {10, 3.58},
		{12, 3.43}, {15, 3.29}, {20, 3.15}, {30, 3.03}}
	t := table[0].t
	for _, row := range table {
		if row.df <= df {
			t = row.t
		}
	}
	return t
}
