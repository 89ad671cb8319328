// Package compare sets two result sets side by side: rows paired by Key (model,
// quantization, hardware, workload, concurrency; not the tool, so Ollama and vLLM pair
// up), each figure's change with its interval, and the gate's verdicts on -fail-on
// thresholds (Gate, Judge), written as text, Markdown or JSON. `planrun compare` and
// apply's -baseline read it; history's rolling baseline judges with it.
package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// Key matches rows across two result sets: the same model, quantization, hardware,
// workload and concurrency. The tool is deliberately not part of it, so the same
// measurement on Ollama and vLLM pairs up.
type Key struct {
	Model        string
	Quantization string
	Hardware     string
	Workload     string
	Concurrency  int
	RequestRate  float64
}

// KeyOf is the row's comparison key.
func KeyOf(r ledger.Row) Key {
	return Key{r.Model, r.Quantization, r.Hardware, r.Workload, r.Concurrency, r.RequestRate}
}

// Change is one figure on both sides. Pct = (B − A) / A × 100: positive means
// B is higher (for TTFT and TPOT, higher is worse; for throughput, better). NaN when
// either side was not measured or A is zero.
type Change struct {
	A, B, Pct float64
}

func change(a, b float64) Change {
	c := Change{A: a, B: b, Pct: math.NaN()}
	if !math.IsNaN(a) && !math.IsNaN(b) && a != 0 {
		c.Pct = (b - a) / a * 100
	}
	return c
}

// Delta is one matched pair of rows (or a row present on one side only: A or B nil).
type Delta struct {
	Key Key
	A   *ledger.Row
	B   *ledger.Row
	// Figures holds every CompareFields figure, in that order.
	Figures []Figure
	// TooFew is set when either side has fewer than MinConclusiveRequests successful
	// requests: its percentiles move by more than most regressions between reruns.
	TooFew bool
	// Notes says when a side had several rows for the key (the latest was kept).
	Notes string
}

// Figure is one result field (a ResultFields name, e.g. "ttft_p99_s") on both sides.
type Figure struct {
	Field string
	Unit  string
	Change
}

// Figure returns the named figure's change; ok is false for a name Compare does not
// compare.
func (d Delta) Figure(name string) (c Change, ok bool) {
	for _, f := range d.Figures {
		if f.Field == name {
			return f.Change, true
		}
	}
	return Change{math.NaN(), math.NaN(), math.NaN()}, false
}

// Name identifies the delta's rows in messages: model/quantization/hardware/workload,
// the concurrency or rate, and the tool when both sides ran the same one.
func (d Delta) Name() string {
	c := compareCells(d)
	name := strings.Join(c[:4], "/") + " c=" + c[4]
	if d.A != nil && d.B != nil && d.A.Tool == d.B.Tool {
		name += " " + d.A.Tool
	}
	return name
}

// MinConclusiveRequests is the fewest successful requests per side for a comparison to
// say more than "too few to conclude": below it one slow request moves a p90 or p99
// (and often the median) by more than the regressions a gate looks for.
const MinConclusiveRequests = 20

// CompareFields are the result fields Compare puts side by side: every numeric field of
// ResultFields (percentiles, rates, SLO figures as they are added there) except the
// ones the rows are matched on. Built once: Compare reads it for every row, and the
// gate for every threshold.
var CompareFields = func() []ledger.ResultField {
	var out []ledger.ResultField
	for _, f := range ledger.ResultFields {
		// An interval's ends (_lo, _hi) are not figures of their own: the gate reads them
		// with the figure.
		if f.Type == cty.Number && f.Name != "concurrency" && f.Name != "request_rate" &&
			!strings.HasSuffix(f.Name, "_lo") && !strings.HasSuffix(f.Name, "_hi") {
			out = append(out, f)
		}
	}
	return out
}()

// fieldFloat reads a numeric result field as a float; NaN when it was not measured.
func fieldFloat(f ledger.ResultField, r *ledger.Row) float64 {
	v := f.Value(r)
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return math.NaN()
	}
	x, _ := v.AsBigFloat().Float64()
	return x
}

// FigureValue reads the CompareFields figure of that name from a row (NaN when it was
// not measured); ok is false for a name that is not one. history reads figures with it.
func FigureValue(name string, r *ledger.Row) (v float64, unit string, ok bool) {
	for _, f := range CompareFields {
		if f.Name == name {
			return fieldFloat(f, r), f.Unit, true
		}
	}
	return math.NaN(), "", false
}

// CompareHeadline are the figures the text and Markdown tables show when not told
// otherwise.
var CompareHeadline = []string{"ttft_p50_s", "tpot_p50_ms", "output_tok_s", "vram_peak_gb"}

// Compare matches rows of a and b by Key, in a's order then b's leftovers. A ledger
// appended across runs may hold a key several times; the latest row (by end time, then
// file order) stands for it and the delta says so.
func Compare(a, b []ledger.Row) []Delta {
	ai, an := latest(a)
	bi, bn := latest(b)
	var out []Delta
	seen := map[Key]bool{}
	emit := func(k Key) {
		if seen[k] {
			return
		}
		seen[k] = true
		d := Delta{Key: k}
		var notes []string
		if r, ok := ai[k]; ok {
			d.A = &r
			if an[k] > 1 {
				notes = append(notes, fmt.Sprintf("A has %d rows, latest kept", an[k]))
			}
		}
		if r, ok := bi[k]; ok {
			d.B = &r
			if bn[k] > 1 {
				notes = append(notes, fmt.Sprintf("B has %d rows, latest kept", bn[k]))
			}
		}
		nan := ledger.NewRow()
		ra, rb := &nan, &nan
		if d.A != nil {
			ra = d.A
		} else {
			notes = append(notes, "only in B")
		}
		if d.B != nil {
			rb = d.B
		} else {
			notes = append(notes, "only in A")
		}
		for _, f := range CompareFields {
			d.Figures = append(d.Figures, Figure{f.Name, f.Unit, change(fieldFloat(f, ra), fieldFloat(f, rb))})
		}
		notes = append(notes, fidelityNotes(d)...)
		notes = append(notes, unsettled(d)...)
		if d.A != nil && d.B != nil && min(d.A.Succeeded, d.B.Succeeded) < MinConclusiveRequests {
			d.TooFew = true
			notes = append(notes, fmt.Sprintf("too few requests to conclude (%d vs %d)", d.A.Succeeded, d.B.Succeeded))
		}
		d.Notes = strings.Join(notes, "; ")
		out = append(out, d)
	}
	for _, r := range a {
		emit(KeyOf(r))
	}
	for _, r := range b {
		emit(KeyOf(r))
	}
	return out
}

// fidelityNotes say which side's load was not the load asked (fidelity short,
// client-bound or late): its figures then measure a different load, or the same load
// sent at other times, and a Δ% between them may be the client's.
func fidelityNotes(d Delta) []string {
	var out []string
	for _, s := range []struct {
		name string
		r    *ledger.Row
	}{{"A", d.A}, {"B", d.B}} {
		if s.r != nil && s.r.Fidelity != "" && s.r.Fidelity != ledger.FidelityOK {
			out = append(out, s.name+" fidelity "+s.r.Fidelity)
		}
	}
	return out
}

// latest indexes rows by key, keeping the one that ended last (file order breaks ties),
// and counts rows per key.
func latest(rows []ledger.Row) (map[Key]ledger.Row, map[Key]int) {
	idx, n := map[Key]ledger.Row{}, map[Key]int{}
	for _, r := range rows {
		k := KeyOf(r)
		n[k]++
		if old, ok := idx[k]; !ok || !r.Ended.Before(old.Ended) {
			idx[k] = r
		}
	}
	return idx, n
}

// ByTool splits rows by tool ("ollama.local", "openai.vllm"), for comparing two tools
// within one ledger: Compare(ByTool(rows)["ollama.local"], ByTool(rows)["openai.vllm"]).
func ByTool(rows []ledger.Row) map[string][]ledger.Row {
	m := map[string][]ledger.Row{}
	for _, r := range rows {
		m[r.Tool] = append(m[r.Tool], r)
	}
	return m
}

// compareHead is the header of both renderings: short labels (the result field's name,
// as -fail-on takes it, then B and Δ%), with the sides named under the table.
func compareHead(fields []string) []string {
	h := []string{"Model", "Quant", "Hardware", "Workload", "Conc."}
	for _, f := range fields {
		h = append(h, f+" A", "B", "Δ%")
	}
	return append(h, "Notes")
}

func compareCells(d Delta, fields ...string) []string {
	conc := fmt.Sprint(d.Key.Concurrency)
	if d.Key.RequestRate > 0 {
		conc += fmt.Sprintf(" @%s/s", ledger.FormatFloat(d.Key.RequestRate))
	}
	c := []string{mdtable.Dash(d.Key.Model), mdtable.Dash(d.Key.Quantization), mdtable.Dash(d.Key.Hardware), mdtable.Dash(d.Key.Workload), conc}
	for _, name := range fields {
		ch, _ := d.Figure(name)
		dec := decimals(name)
		c = append(c, mdtable.Num(ch.A, 1, dec), mdtable.Num(ch.B, 1, dec), pct(ch.Pct))
	}
	return append(c, mdtable.Dash(d.Notes))
}

// decimals is how many decimals a figure is shown with, by its unit.
func decimals(field string) int {
	for _, f := range ledger.ResultFields {
		if f.Name == field {
			switch f.Unit {
			case "s":
				return 3
			case "GB", "requests/s", "":
				return 2
			}
		}
	}
	return 1
}

// orHeadline is fields, or the headline figures when none are named.
func orHeadline(fields []string) []string {
	if len(fields) == 0 {
		return CompareHeadline
	}
	return fields
}

func pct(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// WriteCompareText writes the deltas as an aligned terminal table; la and lb label the
// two sides (file names, or tool names with -by tool). fields are CompareFields names to
// show (none: TTFT p50, TPOT p50, throughput and VRAM peak).
func WriteCompareText(w io.Writer, deltas []Delta, la, lb string, fields ...string) error {
	fields = orHeadline(fields)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(compareHead(fields), "\t"))
	for _, d := range deltas {
		fmt.Fprintln(tw, strings.Join(compareCells(d, fields...), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "A = %s, B = %s. Δ%% = (%s − %s) / %s; positive means %s is higher (worse for TTFT/TPOT, better for throughput).\n%s",
		la, lb, lb, la, la, lb, tooFewLine(deltas))
	return err
}

// tooFewLine warns, once under the table, when some rows cannot support a conclusion.
func tooFewLine(deltas []Delta) string {
	n := 0
	for _, d := range deltas {
		if d.TooFew {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d rows have fewer than %d successful requests on a side: too few to conclude; "+
		"rerun with more requests (repeat_runs, or a longer level) before acting on their Δ%%.\n", n, len(deltas), MinConclusiveRequests)
}

// WriteCompareMarkdown writes the deltas as a Markdown table with the sign convention
// under it; fields as for WriteCompareText.
func WriteCompareMarkdown(w io.Writer, deltas []Delta, la, lb string, fields ...string) error {
	fields = orHeadline(fields)
	var b strings.Builder
	mdtable.Table(&b, compareHead(fields), func(add func(...string)) {
		for _, d := range deltas {
			add(compareCells(d, fields...)...)
		}
	})
	fmt.Fprintf(&b, "A = %s, B = %s. Δ%% = (%s − %s) / %s × 100; positive means %s is higher (worse for TTFT and TPOT, better for throughput). "+
		"TTFT and TPOT are p50 over all requests; throughput is the median across runs of Σ output tokens / measured window; "+
		"VRAM is the peak during load.\n", la, lb, lb, la, la, lb)
	b.WriteString(tooFewLine(deltas))
	_, err := io.WriteString(w, b.String())
	return err
}
