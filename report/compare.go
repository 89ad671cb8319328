package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
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
func KeyOf(r Row) Key {
	return Key{r.Model, r.Quantization, r.Hardware, r.Workload, r.Concurrency, r.RequestRate}
}

// Change is one headline figure on both sides. Pct = (B − A) / A × 100: positive means
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
	A   *Row
	B   *Row
	// Headline figures: TTFT p50 (s), TPOT p50 (ms), output tok/s, VRAM peak (GB).
	TTFT, TPOT, Throughput, VRAM Change
	// Notes says when a side had several rows for the key (the latest was kept).
	Notes string
}

// Compare matches rows of a and b by Key, in a's order then b's leftovers. A ledger
// appended across runs may hold a key several times; the latest row (by end time, then
// file order) stands for it and the delta says so.
func Compare(a, b []Row) []Delta {
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
		nan := NewRow()
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
		d.TTFT = change(ra.TTFT.P50, rb.TTFT.P50)
		d.TPOT = change(ra.TPOT.P50*1000, rb.TPOT.P50*1000)
		d.Throughput = change(ra.OutputTokS, rb.OutputTokS)
		d.VRAM = change(ra.VRAMPeakGB, rb.VRAMPeakGB)
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

// latest indexes rows by key, keeping the one that ended last (file order breaks ties),
// and counts rows per key.
func latest(rows []Row) (map[Key]Row, map[Key]int) {
	idx, n := map[Key]Row{}, map[Key]int{}
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
func ByTool(rows []Row) map[string][]Row {
	m := map[string][]Row{}
	for _, r := range rows {
		m[r.Tool] = append(m[r.Tool], r)
	}
	return m
}

// compareHead is the header of both renderings; labels name the two sides.
func compareHead(la, lb string) []string {
	h := []string{"Model", "Quant", "Hardware", "Workload", "Conc."}
	for _, f := range []string{"TTFT p50 (s)", "TPOT p50 (ms)", "Throughput (tok/s)", "VRAM (GB)"} {
		h = append(h, f+" "+la, f+" "+lb, "Δ%")
	}
	return append(h, "Notes")
}

func compareCells(d Delta) []string {
	conc := fmt.Sprint(d.Key.Concurrency)
	if d.Key.RequestRate > 0 {
		conc += fmt.Sprintf(" @%s/s", formatFloat(d.Key.RequestRate))
	}
	c := []string{dash(d.Key.Model), dash(d.Key.Quantization), dash(d.Key.Hardware), dash(d.Key.Workload), conc}
	for _, ch := range []struct {
		c        Change
		decimals int
	}{{d.TTFT, 3}, {d.TPOT, 1}, {d.Throughput, 1}, {d.VRAM, 2}} {
		c = append(c, num(ch.c.A, 1, ch.decimals), num(ch.c.B, 1, ch.decimals), pct(ch.c.Pct))
	}
	return append(c, dash(d.Notes))
}

func pct(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// WriteCompareText writes the deltas as an aligned terminal table; la and lb label the
// two sides (file names, or tool names with -by tool).
func WriteCompareText(w io.Writer, deltas []Delta, la, lb string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(compareHead(la, lb), "\t"))
	for _, d := range deltas {
		fmt.Fprintln(tw, strings.Join(compareCells(d), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "Δ%% = (%s − %s) / %s; positive means %s is higher (worse for TTFT/TPOT, better for throughput).\n", lb, la, la, lb)
	return err
}

// WriteCompareMarkdown writes the deltas as a Markdown table with the sign convention
// under it.
func WriteCompareMarkdown(w io.Writer, deltas []Delta, la, lb string) error {
	var b strings.Builder
	table(&b, compareHead(la, lb), func(add func(...string)) {
		for _, d := range deltas {
			add(compareCells(d)...)
		}
	})
	fmt.Fprintf(&b, "Δ%% = (%s − %s) / %s × 100; positive means %s is higher (worse for TTFT and TPOT, better for throughput). "+
		"TTFT and TPOT are p50 over all requests; throughput is the median across runs of Σ output tokens / measured window; "+
		"VRAM is the peak during load.\n", lb, la, la, lb)
	_, err := io.WriteString(w, b.String())
	return err
}
