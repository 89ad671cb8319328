package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/planrun/planrun/report"
)

func init() {
	register("compare", "put two result sets (or two tools of one) side by side, with Δ%", runCompare)
}

type compareArgs struct {
	Tools    string
	Markdown bool
	Out      string
}

func runCompare(_ context.Context, env *Env, args []string) int {
	var a compareArgs
	fs := newFlagSet(env, "compare", "A [B]", `Match the rows of two result sets by model, quantization, hardware, workload and
concurrency, and show TTFT p50, TPOT p50, throughput and VRAM side by side with
Δ% = (B − A) / A × 100 (positive: B is higher; for TTFT and TPOT higher is worse).

A and B are run directories (their results.csv) or CSV ledgers. With -tools X,Y a
single result set is split by tool instead: the Ollama-vs-vLLM view of one run.`)
	fs.StringVar(&a.Tools, "tools", "", "compare two tools within one result set: -tools ollama.local,openai.vllm")
	fs.BoolVar(&a.Markdown, "markdown", false, "write Markdown instead of an aligned text table")
	fs.StringVar(&a.Out, "o", "", "write to this file instead of stdout")
	var pa, pb string
	operands := []*string{&pa, &pb}
	if hasFlag(args, "tools") {
		operands = operands[:1]
	}
	if code, ok := parseArgs(fs, args, len(operands), operands...); !ok {
		return code
	}
	rowsA, err := readRows(pa)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return exitError
	}
	labelA, labelB := label(pa), label(pb)
	var rowsB []report.Row
	if a.Tools != "" {
		tools := strings.Split(a.Tools, ",")
		if len(tools) != 2 {
			fmt.Fprintln(env.Stderr, "planrun compare: -tools takes two tools separated by a comma, e.g. ollama.local,openai.vllm")
			return exitUsage
		}
		by := report.ByTool(rowsA)
		for _, t := range tools {
			if _, ok := by[t]; !ok {
				fmt.Fprintf(env.Stderr, "planrun compare: no rows for tool %q in %s (tools there: %s)\n", t, pa, strings.Join(keys(by), ", "))
				return exitError
			}
		}
		rowsA, rowsB = by[tools[0]], by[tools[1]]
		labelA, labelB = tools[0], tools[1]
	} else if rowsB, err = readRows(pb); err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return exitError
	}

	deltas := compareRows(rowsA, rowsB)
	w := env.Stdout
	if a.Out != "" {
		f, err := os.Create(a.Out)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
			return exitError
		}
		defer f.Close()
		w = f
	}
	if a.Markdown {
		err = report.WriteCompareMarkdown(w, deltas, labelA, labelB)
	} else {
		err = report.WriteCompareText(w, deltas, labelA, labelB)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return exitError
	}
	return exitOK
}

// compareRows pairs rows of two result sets. Two sets of one tool each pair up across
// tools (Ollama in A, vLLM in B); otherwise rows pair within the same tool, so two runs
// of a two-tool plan compare tool by tool.
func compareRows(a, b []report.Row) []report.Delta {
	byA, byB := report.ByTool(a), report.ByTool(b)
	if len(byA) == 1 && len(byB) == 1 {
		return report.Compare(a, b)
	}
	tools := map[string]bool{}
	for t := range byA {
		tools[t] = true
	}
	for t := range byB {
		tools[t] = true
	}
	var out []report.Delta
	for _, t := range keys(tools) {
		for _, d := range report.Compare(byA[t], byB[t]) {
			d.Notes = strings.TrimSuffix("tool "+t+"; "+d.Notes, "; ")
			out = append(out, d)
		}
	}
	return out
}

// label names a result set in headers: a run directory's name, or the file's.
func label(path string) string {
	path = strings.TrimSuffix(path, "/")
	base := filepath.Base(path)
	if base == "results.csv" {
		return filepath.Base(filepath.Dir(path))
	}
	return base
}

// readRows reads a CSV ledger, or the results.csv of a run directory.
func readRows(path string) ([]report.Row, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "results.csv")
	}
	rows, err := report.ReadLedger(path)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s holds no result rows", path)
	}
	return rows, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// hasFlag reports whether args set the flag name (-name, --name, -name=value).
