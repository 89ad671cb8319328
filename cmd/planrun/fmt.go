package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/planrun/planrun/plan"
	"github.com/pmezard/go-difflib/difflib"
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
	operands, err := parseFlags(fs, args)
	if err != nil {
		return flagErrorCode(err)
	}
	a.Paths = operands
	if len(a.Paths) == 0 {
		a.Paths = []string{"."}
	}

	if len(a.Paths) == 1 && a.Paths[0] == "-" {
		return a.stdin(env)
	}
	files, code := hclFiles(env, a.Paths)
	if code != exitOK {
		return code
	}
	for _, f := range files {
		if !a.file(env, f) {
			code = exitError
		}
	}
	return code
}

// stdin formats stdin to stdout (with -check, writes nothing and fails when it would
// change).
func (a *fmtArgs) stdin(env *Env) int {
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

// hclFiles are the files the paths name: a directory's *.hcl, and each file named that
// is HCL (the others skipped with a note). A path that is not there fails.
func hclFiles(env *Env, paths []string) ([]string, int) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
			return nil, exitError
		}
		if info.IsDir() {
			m, _ := filepath.Glob(filepath.Join(p, "*.hcl"))
			files = append(files, m...)
		} else if note := notHCL(p); note != "" {
			fmt.Fprintf(env.Stderr, "planrun fmt: skipping %s: %s\n", p, note)
		} else {
			files = append(files, p)
		}
	}
	return files, exitOK
}

// file formats one file: it names it when it changes (with its diff under -diff) and
// rewrites it unless -check. ok is false for a file that cannot be formatted or
// written, or that -check finds unformatted.
func (a *fmtArgs) file(env *Env, f string) (ok bool) {
	src, err := os.ReadFile(f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
		return false
	}
	out, diags := formatHCL(f, src)
	if diags.HasErrors() {
		plan.WriteDiagnostics(env.Stderr, map[string]*hcl.File{f: {Bytes: src}}, diags, false)
		return false
	}
	if bytes.Equal(src, out) {
		return true
	}
	fmt.Fprintln(env.Stdout, f)
	ok = true
	if a.Diff {
		if err := writeDiff(env.Stdout, f, f+" (formatted)", string(src), string(out)); err != nil {
			fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
			ok = false
		}
	}
	if a.Check {
		return false
	}
	if err := os.WriteFile(f, out, 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "planrun fmt: %v\n", err)
		return false
	}
	return ok
}

// notHCL says why a file named on the command line is not formatted (a shell glob such
// as examples/* also names TOML and Markdown files), or "" for an HCL file.
func notHCL(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".hcl":
		return ""
	case ".toml":
		return "fmt formats HCL plans, not TOML; planrun convert turns the seed's config.toml into a plan"
	}
	return "fmt formats .hcl files only"
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
func writeDiff(w io.Writer, from, to, a, b string) error {
	return difflib.WriteUnifiedDiff(w, difflib.UnifiedDiff{
		A: splitLines(a), B: splitLines(b),
		FromFile: from, ToFile: to,
		Context: 3,
	})
}

// splitLines splits after each newline, without the empty piece after a final newline
// (difflib.SplitLines would add one), and ends a last unterminated line with one so the
// diff's lines stay apart.
func splitLines(s string) []string {
	ls := strings.SplitAfter(s, "\n")
	if n := len(ls); ls[n-1] == "" {
		ls = ls[:n-1]
	} else {
		ls[n-1] += "\n"
	}
	return ls
}
