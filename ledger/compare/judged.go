package compare

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/planrun/planrun/ledger"
)

// Judged is what a gate judged: the pairs of rows it held thresholds against and the
// figures it read, so a gate that passes can say on what, and one that compared nothing
// can fail instead of passing.
type Judged struct {
	// Rows are the deltas with a row on both sides that are two measurements; Same
	// those whose two sides are one measurement (a run compared with itself).
	Rows, Same int
	// SameRun is the run id of a pair that was one measurement.
	SameRun string
	// Figures counts row × threshold pairs whose figure A measured.
	Figures int
	// Notes say where a threshold was judged on a lower percentile, or not at all
	// (rows too small to conclude).
	Notes []string
}

// SameMeasurement reports whether two rows are one measurement: the same run, cell,
// level and start (a run directory and the ledger it was appended to), or, for rows
// without a run id, identical records.
func SameMeasurement(a, b *ledger.Row) bool {
	if a.RunID != "" || b.RunID != "" {
		return a.RunID == b.RunID && a.CellID == b.CellID && a.Concurrency == b.Concurrency &&
			a.RequestRate == b.RequestRate && a.Started.Equal(b.Started)
	}
	return slices.Equal(a.Record(), b.Record())
}

// Judge says what Gate judges of deltas against ts.
func Judge(deltas []Delta, ts []Threshold) Judged {
	var j Judged
	judgedOnRows := map[[2]string]int{} // threshold field, judged-on field → rows
	fewest := map[[2]string]int{}
	tooFew := 0
	for _, d := range deltas {
		if d.A == nil || d.B == nil {
			continue
		}
		if SameMeasurement(d.A, d.B) {
			j.Same++
			j.SameRun = d.A.RunID
			continue
		}
		j.Rows++
		have := min(d.A.Succeeded, d.B.Succeeded)
		if have < MinConclusiveRequests {
			tooFew++
		}
		for _, t := range ts {
			on := JudgedOn(t.Field, have)
			if c, _ := d.Figure(cmp.Or(on, t.Field)); !math.IsNaN(c.A) {
				j.Figures++
			}
			if on != "" && on != t.Field {
				k := [2]string{t.Field, on}
				judgedOnRows[k]++
				if n, ok := fewest[k]; !ok || have < n {
					fewest[k] = have
				}
			}
		}
	}
	j.Notes = judgedOnNotes(judgedOnRows, fewest)
	if tooFew > 0 && len(ts) > 0 {
		j.Notes = append(j.Notes, fmt.Sprintf("%s with fewer than %d successful requests a side: too few to conclude (-strict fails their crossings)",
			plural(tooFew, "row"), MinConclusiveRequests))
	}
	return j
}

// judgedOnNotes say, for each threshold judged on a lower percentile in some rows (by
// threshold field and judged-on field), in how many and with how few requests.
func judgedOnNotes(rows, fewest map[[2]string]int) []string {
	var notes []string
	keys := slices.SortedFunc(maps.Keys(rows), func(a, b [2]string) int { return cmp.Compare(a[0]+a[1], b[0]+b[1]) })
	for _, k := range keys {
		notes = append(notes, fmt.Sprintf("%s judged on %s in %s: %d requests cannot resolve %s (it needs %d)",
			k[0], k[1], plural(rows[k], "row"), fewest[k], percentileOf(k[0]), RequestsToConclude(k[0])))
	}
	return notes
}

// percentileOf is "p99" for ttft_p99_s.
func percentileOf(field string) string {
	if m := percentileName.FindStringSubmatch(field); m != nil {
		return "p" + m[1]
	}
	return field
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Mismatch says why no row of a matches a row of b: for each part of the key (and the
// tool, when rows pair within their tool) on which the two sides differ, the values
// each side has, e.g. "A has model=x, B has model=y".
func Mismatch(a, b []ledger.Row, byTool bool) string {
	parts := []struct {
		name string
		val  func(ledger.Row) string
	}{
		{"model", func(r ledger.Row) string { return r.Model }},
		{"quantization", func(r ledger.Row) string { return r.Quantization }},
		{"hardware", func(r ledger.Row) string { return r.Hardware }},
		{"workload", func(r ledger.Row) string { return r.Workload }},
		{"concurrency", func(r ledger.Row) string { return strconv.Itoa(r.Concurrency) }},
		{"request_rate", func(r ledger.Row) string { return ledger.FormatFloat(r.RequestRate) }},
		{"tool", func(r ledger.Row) string { return r.Tool }},
	}
	values := func(rows []ledger.Row, val func(ledger.Row) string) string {
		var vs []string
		for _, r := range rows {
			if v := val(r); !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
		slices.Sort(vs)
		return strings.Join(vs, ",")
	}
	var out []string
	for _, p := range parts {
		if p.name == "tool" && !byTool {
			continue
		}
		if va, vb := values(a, p.val), values(b, p.val); va != vb {
			out = append(out, fmt.Sprintf("A has %s=%s, B has %s=%s", p.name, va, p.name, vb))
		}
	}
	if len(out) == 0 {
		return "the two sides' rows differ in how their keys combine"
	}
	return strings.Join(out, "; ")
}
