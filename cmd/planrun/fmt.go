package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/planrun/planrun/plan"
)

func init() {
	register("fmt", "rewrite plan files in the canonical HCL style", runFmt)
}

type fmtArgs struct {
	Check bool
	Diff  bool
	Paths []string
}

func runFmt(_ context.Context, env *Env, args []string) int {
	var a fmtArgs
	fs := newFlagSet(env, "fmt", "[PATH...]", "Rewrite .hcl files (or the *.hcl files of directories; default \".\") in the\ncanonical style. \"-\" formats stdin to stdout. With -check nothing is written and\nthe exit code is 1 when a file needs formatting (for CI).")
	fs.BoolVar(&a.Check, "check", false, "write nothing; list files that need formatting and exit 1 if any")
	fs.BoolVar(&a.Diff, "diff", false, "print the changes as a diff")
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return exitOK
			}
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
	a.Paths = operands
	if len(a.Paths) == 0 {
		a.Paths = []string{"."}
	}

	if len(a.Paths) == 1 && a.Paths[0] == "-" {
		src, err := io.ReadAll(env.Stdin)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
			return exitError
		}
		out, diags := formatHCL("<stdin>", src)
		if diags.HasErrors() {
			plan.WriteDiagnostics(env.Stderr, map[string]*hcl.File{"<stdin>": {Bytes: src}}, diags, false)
			return exitError
		}
		if a.Check && !bytes.Equal(src, out) {
			return exitError
		}
		if !a.Check {
			env.Stdout.Write(out)
		}
		return exitOK
	}

	var files []string
	for _, p := range a.Paths {
		info, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
			return exitError
		}
		if info.IsDir() {
			m, _ := filepath.Glob(filepath.Join(p, "*.hcl"))
			files = append(files, m...)
		} else {
			files = append(files, p)
		}
	}
	code := exitOK
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
			code = exitError
			continue
		}
		out, diags := formatHCL(f, src)
		if diags.HasErrors() {
			plan.WriteDiagnostics(env.Stderr, map[string]*hcl.File{f: {Bytes: src}}, diags, false)
			code = exitError
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		fmt.Fprintln(env.Stdout, f)
		if a.Diff {
			writeDiff(env.Stdout, f, string(src), string(out))
		}
		if a.Check {
			code = exitError
			continue
		}
		if err := os.WriteFile(f, out, 0o644); err != nil {
			fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
			code = exitError
		}
	}
	return code
}

// formatHCL formats src after checking it parses: hclwrite would otherwise "format"
// broken input into something else.
func formatHCL(name string, src []byte) ([]byte, hcl.Diagnostics) {
	if _, diags := hclparse.NewParser().ParseHCL(src, name); diags.HasErrors() {
		return nil, diags
	}
	return hclwrite.Format(src), nil
}

// writeDiff prints a unified diff of two texts, hunks with three lines of context.
func writeDiff(w io.Writer, name, a, b string) {
	x, y := splitLines(a), splitLines(b)
	// Longest common subsequence table; plan files are small.
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
		i, j int // 0-based positions before this line in a and b
	}
	var ops []line
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, line{' ', x[i], i, j})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, line{'-', x[i], i, j})
			i++
		default:
			ops = append(ops, line{'+', y[j], i, j})
			j++
		}
	}
	fmt.Fprintf(w, "--- %s\n+++ %s (formatted)\n", name, name)
	const ctx = 3
	for k := 0; k < len(ops); {
		if ops[k].op == ' ' {
			k++
			continue
		}
		start := max(k-ctx, 0)
		end := k
		for end < len(ops) {
			if ops[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].op == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(ops) {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.op != '+' {
				na++
			}
			if o.op != '-' {
				nb++
			}
		}
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", ops[start].i+1, na, ops[start].j+1, nb)
		for _, o := range ops[start:end] {
			t := o.text
			if !strings.HasSuffix(t, "\n") {
				t += "\n"
			}
			fmt.Fprintf(w, "%c%s", o.op, t)
		}
		k = end
	}
}

// splitLines splits after each newline, without the empty piece after a final newline.
func splitLines(s string) []string {
	ls := strings.SplitAfter(s, "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}
