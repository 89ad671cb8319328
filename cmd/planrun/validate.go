package main

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/plan"
)

func init() {
	register("validate", "check a plan without running it (no request is sent)", runValidate)
}

// load loads the plan at path, expands and selects its cells, and prints any
// diagnostics to stderr. A non-zero code means the caller should return it.
func (f *planFlags) load(env *Env, path string) (*plan.Plan, []*plan.Cell, int) {
	p, diags := plan.Load(path, plan.LoadOptions{Vars: f.Vars, VarFiles: f.VarFiles, Getenv: env.Getenv, Placements: apply.Placements()})
	if p != nil {
		cells, more := p.Cells()
		diags = append(diags, more...)
		if !diags.HasErrors() {
			f.writeDiags(env, p.Files, diags)
			cells, err := plan.SelectCells(cells, f.Only, f.Except)
			if err != nil {
				fmt.Fprintf(env.Stderr, "planrun: %v\n", err)
				return nil, nil, exitUsage
			}
			return p, cells, exitOK
		}
		f.writeDiags(env, p.Files, diags)
		return nil, nil, exitError
	}
	f.writeDiags(env, filesOf(diags, path), diags)
	return nil, nil, exitError
}

func (f *planFlags) writeDiags(env *Env, files map[string]*hcl.File, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	var errs, warns hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		} else {
			warns = append(warns, d)
		}
	}
	color := env.IsTerminal && !f.NoColor
	// As Terraform: warnings to stdout, errors to stderr; to stderr too under output
	// meant for a program.
	out := env.Stdout
	if f.machine {
		out = env.Stderr
	}
	plan.WriteDiagnostics(out, files, warns, color)
	plan.WriteDiagnostics(env.Stderr, files, errs, color)
}

// filesOf re-reads the files a failed load named, so its diagnostics get snippets.
func filesOf(diags hcl.Diagnostics, path string) map[string]*hcl.File {
	files := map[string]*hcl.File{}
	for _, d := range diags {
		if d.Subject == nil || files[d.Subject.Filename] != nil {
			continue
		}
		if src, err := readFile(d.Subject.Filename); err == nil {
			// Parsed (errors and all) so the diagnostics can name the block they are in.
			f, _ := hclsyntax.ParseConfig(src, d.Subject.Filename, hcl.InitialPos)
			if f == nil {
				f = &hcl.File{}
			}
			f.Bytes = src
			files[d.Subject.Filename] = f
		}
	}
	return files
}

type validateArgs struct {
	planFlags
	Path string
}

func runValidate(_ context.Context, env *Env, args []string) int {
	var a validateArgs
	fs := newFlagSet(env, "validate", "PLAN", "Check a plan (a .hcl file or a directory of them): syntax, references, types,\nand matrix expansion. Sends no request.")
	a.bind(fs)
	if code, ok := parseArgs(fs, args, 1, &a.Path); !ok {
		return code
	}
	_, cells, code := a.load(env, a.Path)
	if code != exitOK {
		return code
	}
	fmt.Fprintf(env.Stdout, "Success! The plan is valid: %d %s.\n", len(cells), plural(len(cells), "cell", "cells"))
	return exitOK
}
