package apply

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
	"github.com/planrun/planrun/stats"
)

// referenceFigure is the row's figure a reference range is held against.
func referenceFigure(row *report.Row, metric string) float64 {
	switch metric {
	case "ttft_s":
		return row.TTFT.P50
	case "tpot_ms":
		return row.TPOT.P50 * 1000
	case "output_tok_s":
		return row.OutputTokS
	case "vram_gb":
		if !math.IsNaN(row.VRAMProcessGB) {
			return row.VRAMProcessGB
		}
		return row.VRAMPeakGB
	}
	return math.NaN()
}

// holdAgainstReferences sets the row's reference verdict: for every matching reference
// block, each published range against the row's figure ("ttft_s within; output_tok_s
// below"). A figure that was not measured gets no verdict.
func (a *applier) holdAgainstReferences(cell *plan.Cell, row *report.Row) {
	var names, verdicts []string
	for _, ref := range a.o.Plan.References {
		if !ref.Matches(cell) {
			continue
		}
		names = append(names, ref.Name)
		metrics := make([]string, 0, len(ref.Ranges))
		for m := range ref.Ranges {
			metrics = append(metrics, m)
		}
		sort.Strings(metrics)
		for _, m := range metrics {
			r := ref.Ranges[m]
			if v := stats.Reference(referenceFigure(row, m), r[0], r[1]); v != "" {
				verdicts = append(verdicts, fmt.Sprintf("%s %s", m, v))
			}
		}
	}
	row.Reference = strings.Join(names, ", ")
	row.Verdict = strings.Join(verdicts, "; ")
}

// resultValues is what an expect condition sees as result.*: the names in
// plan.ResultVariables. A figure that was not measured is null, so a condition on it
// fails with a clear message instead of comparing against zero.
func resultValues(row report.Row) map[string]cty.Value {
	num := func(f float64) cty.Value {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return cty.NullVal(cty.Number)
		}
		return cty.NumberFloatVal(f)
	}
	errRate := math.NaN()
	if row.Requests > 0 {
		errRate = float64(row.Failed) / float64(row.Requests)
	}
	return map[string]cty.Value{
		"cell":             cty.StringVal(row.CellID),
		"model":            cty.StringVal(row.Model),
		"model_id":         cty.StringVal(row.ModelID),
		"quantization":     cty.StringVal(row.Quantization),
		"tool":             cty.StringVal(row.Tool),
		"hardware":         cty.StringVal(row.Hardware),
		"workload":         cty.StringVal(row.Workload),
		"concurrency":      cty.NumberIntVal(int64(row.Concurrency)),
		"requests":         cty.NumberIntVal(int64(row.Requests)),
		"failed":           cty.NumberIntVal(int64(row.Failed)),
		"error_rate":       num(errRate),
		"stability":        cty.StringVal(row.Stability),
		"ttft_p50_s":       num(row.TTFT.P50),
		"ttft_p90_s":       num(row.TTFT.P90),
		"ttft_p99_s":       num(row.TTFT.P99),
		"ttft_mean_s":      num(row.TTFT.Mean),
		"tpot_p50_ms":      num(row.TPOT.P50 * 1000),
		"tpot_p90_ms":      num(row.TPOT.P90 * 1000),
		"tpot_p99_ms":      num(row.TPOT.P99 * 1000),
		"tpot_mean_ms":     num(row.TPOT.Mean * 1000),
		"itl_p50_ms":       num(row.ITL.P50 * 1000),
		"itl_p99_ms":       num(row.ITL.P99 * 1000),
		"e2e_p50_s":        num(row.E2E.P50),
		"e2e_p99_s":        num(row.E2E.P99),
		"output_tok_s":     num(row.OutputTokS),
		"requests_s":       num(row.RequestsPerSec),
		"decode_tok_s":     num(row.DecodeRate.P50),
		"vram_peak_gb":     num(row.VRAMPeakGB),
		"vram_baseline_gb": num(row.VRAMBaselineGB),
	}
}

// checkExpects evaluates every expect block that applies to the row's cell.
func (a *applier) checkExpects(cell *plan.Cell, row report.Row) {
	vals := resultValues(row)
	for _, e := range a.o.Plan.Expects {
		if !e.Applies(cell.ID) {
			continue
		}
		ok, diags := e.Check(vals)
		if ok && !diags.HasErrors() {
			continue
		}
		msg := e.ErrorMessage
		if diags.HasErrors() {
			msg = strings.TrimSpace(diags.Error())
		}
		if msg == "" {
			msg = "condition is false"
		}
		msg += " (" + describeValues(e.Condition, vals) + ")"
		f := ExpectFailure{Expect: e.Name, Cell: cell.ID, Concurrency: row.Concurrency,
			Condition: a.source(e.Condition.Range()), Message: msg}
		a.res.ExpectFailures = append(a.res.ExpectFailures, f)
		a.note("%s", f)
	}
}

// source is the plan text of a range (an expect's condition), with its location.
func (a *applier) source(r hcl.Range) string {
	f, ok := a.o.Plan.Files[r.Filename]
	if !ok || r.End.Byte > len(f.Bytes) || r.Start.Byte > r.End.Byte {
		return r.String()
	}
	return fmt.Sprintf("%s (%s:%d)", strings.Join(strings.Fields(string(f.Bytes[r.Start.Byte:r.End.Byte])), " "), filepath.Base(r.Filename), r.Start.Line)
}

// describeValues names the result values a condition refers to, so a failure says
// which figures made it false.
func describeValues(cond hcl.Expression, vals map[string]cty.Value) string {
	var parts []string
	seen := map[string]bool{}
	for _, tr := range cond.Variables() {
		if tr.RootName() != "result" || len(tr) < 2 {
			continue
		}
		attr, ok := tr[1].(hcl.TraverseAttr)
		if !ok || seen[attr.Name] {
			continue
		}
		seen[attr.Name] = true
		parts = append(parts, fmt.Sprintf("result.%s = %s", attr.Name, ctyString(vals[attr.Name])))
	}
	return strings.Join(parts, ", ")
}

func ctyString(v cty.Value) string {
	switch {
	case v == cty.NilVal || v.IsNull():
		return "null (not measured)"
	case v.Type() == cty.String:
		return strconv.Quote(v.AsString())
	case v.Type() == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return strconv.FormatFloat(f, 'g', 6, 64)
	}
	return v.GoString()
}

// groupPIDs returns the processes of the process group led by pid (the server and its
// children, e.g. Ollama's runner, which holds the GPU memory), read from /proc.
func groupPIDs(pgid int) []int {
	pids := []int{pgid}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return pids
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the ")" that closes the command name: state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
