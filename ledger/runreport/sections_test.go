package runreport

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// A row's verdict lists, in order, a status other than ok, its goal, a load fidelity
// other than ok and its reference verdict; "ok" when there is none of them.
func TestRowVerdictListsWhatTheRowConcluded(t *testing.T) {
	row := func(status, goal, fidelity string, short float64, ref, verdict string) ledger.Row {
		r := ledger.NewRow()
		r.Status, r.Goal, r.Fidelity, r.FidelityShortfallPct, r.Reference, r.Verdict = status, goal, fidelity, short, ref, verdict
		return r
	}
	for _, c := range []struct {
		r    ledger.Row
		want string
	}{
		{row(ledger.StatusOK, "", "", math.NaN(), "", ""), "ok"},
		{row(ledger.StatusOK, "", ledger.FidelityOK, 0, "", ""), "ok"},
		{row(ledger.StatusOK, "met", "", math.NaN(), "", ""), "goal met"},
		{row(ledger.StatusOK, "", ledger.FidelityShort, 12.4, "", ""), "load short −12%"},
		{row(ledger.StatusInterrupted, "missed", ledger.FidelityClientBound, math.NaN(), "rtx4060-7b-q4", "below"),
			"INTERRUPTED; goal missed; load client-bound; rtx4060-7b-q4: below"},
	} {
		if got := rowVerdict(c.r); got != c.want {
			t.Errorf("rowVerdict = %q, want %q", got, c.want)
		}
	}
}

// The concurrency cell tells closed loop, open loop and trace replay apart.
func TestConcurrencyCellNamesTheLoad(t *testing.T) {
	row := func(conc int, rate float64, paced int) ledger.Row {
		r := ledger.NewRow()
		r.Concurrency, r.RequestRate, r.SendLag = conc, rate, stats.Dist{N: paced}
		return r
	}
	for _, c := range []struct {
		r    ledger.Row
		want string
	}{
		{row(4, 0, 0), "4"},
		{row(0, 0, 0), "0"},
		{row(4, 2.5, 30), "4 (open loop 2.5 req/s)"},
		{row(0, 0, 30), "trace replay"},
		{row(8, 0, 30), "trace replay, ≤ 8 in flight"},
	} {
		if got := concurrency(c.r); got != c.want {
			t.Errorf("concurrency(conc %d, rate %v, paced %d) = %q, want %q",
				c.r.Concurrency, c.r.RequestRate, c.r.SendLag.N, got, c.want)
		}
	}
}

// The fidelity mark is "—" when not judged, the shortfall when short and measured, and
// the verdict's own word otherwise.
func TestFidelityMark(t *testing.T) {
	for _, c := range []struct {
		fidelity string
		short    float64
		want     string
	}{
		{"", 30, "—"},
		{ledger.FidelityShort, 12.4, "short −12%"},
		{ledger.FidelityShort, math.NaN(), "short"},
		{ledger.FidelityOK, 12.4, "ok"},
		{ledger.FidelityClientBound, 12.4, "client-bound"},
		{ledger.FidelityLate, 0.4, "late 27.4 ms"},
	} {
		r := ledger.NewRow()
		r.Fidelity, r.FidelityShortfallPct = c.fidelity, c.short
		r.SendLag = stats.Dist{N: 40, P99: 0.02743, Max: 0.09}
		if got := FidelityMark(r); got != c.want {
			t.Errorf("FidelityMark(%q, %v) = %q, want %q", c.fidelity, c.short, got, c.want)
		}
	}
}

// The formulas name the rows' VRAM sources once each, in order, and say nothing of VRAM
// sources when no row has one.
func TestFormulaLinesNameVRAMSources(t *testing.T) {
	base := formulaLines(nil)
	for _, l := range base {
		if strings.HasPrefix(l, "VRAM figures") {
			t.Errorf("formulas without rows list no VRAM source, got %q", l)
		}
	}
	a, b, c := ledger.NewRow(), ledger.NewRow(), ledger.NewRow()
	a.VRAMSource, b.VRAMSource, c.VRAMSource = "nvml v2", "nvml v1", "nvml v2"
	got := formulaLines([]ledger.Row{a, b, c, ledger.NewRow()})
	if want := append(slices.Clone(base), "VRAM figures in these rows: nvml v2; nvml v1."); !slices.Equal(got, want) {
		t.Errorf("formulas\n%q\nwant\n%q", got, want)
	}
}

// The CPU item counts logical CPUs only when they are known; without a CPU name or a
// count there is no CPU item.
func TestEnvItemsCPU(t *testing.T) {
	cpu := func(e ledger.Environment) (string, bool) {
		for _, it := range envItems(e) {
			if it[0] == "CPU" {
				return it[1], true
			}
		}
		return "", false
	}
	for _, c := range []struct {
		name string
		n    int
		want string
		ok   bool
	}{
		{"AMD EPYC 9654", 16, "AMD EPYC 9654 (16 logical CPUs)", true},
		{"AMD EPYC 9654", 0, "AMD EPYC 9654", true},
		{"", 4, "(4 logical CPUs)", true},
		{"", 0, "", false},
	} {
		if got, ok := cpu(ledger.Environment{CPU: c.name, CPUs: c.n}); got != c.want || ok != c.ok {
			t.Errorf("CPU %q × %d: item %q %v, want %q %v", c.name, c.n, got, ok, c.want, c.ok)
		}
	}
}
