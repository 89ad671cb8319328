// Package plan reads planrun's HCL plan language: variables, locals, backends, servers,
// hardware, workloads, matrices, references, expectations and outputs. It decodes the
// plan the way Terraform does (decode first, evaluate once the context exists), reports
// every problem as an hcl.Diagnostic with a source range, and expands matrices into
// cells with stable ids. It never touches the network.
package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/suggest"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// LoadOptions carries the values a plan's variables get from outside the plan.
type LoadOptions struct {
	// Vars are "-var name=value" arguments, applied last (they win).
	Vars []string
	// VarFiles are "-var-file" paths (HCL files of name = value), applied in order.
	VarFiles []string
	// Getenv reads PLANRUN_VAR_<name>; nil means os.Getenv.
	Getenv func(string) string
	// Placements are the batch schedulers' sub-blocks a hardware block may have, each
	// decoded by its kind (apply.Placements: Slurm's, Kubernetes'); nil means none,
	// except in plan's own tests (testPlacements).
	Placements []PlacementKind
}

// testPlacements are the kinds plan's own tests load with (placements_test.go sets
// them): they cannot import the packages that own the blocks, which import plan.
var testPlacements []PlacementKind

// Plan is a loaded, checked plan. Matrices are expanded on demand by Cells.
type Plan struct {
	// Path is what Load was given; Dir is the directory relative paths resolve against.
	Path, Dir string
	// Hash is the sha256 (hex) over the plan files' bytes, sorted by name, and the
	// resolved variable values: two runs with equal hashes ran the same plan.
	Hash string
	// Files maps each parsed file name to its parse, for rendering diagnostics.
	Files map[string]*hcl.File

	Variables  []*Variable
	Backends   []*Backend
	Hardware   []*Hardware
	Workloads  []*Workload
	Servers    []*Server
	Matrices   []*Matrix
	References []*Reference
	Expects    []*Expect
	Decisions  []*Decision
	Outputs    []*Output
	// Datasets are the dataset blocks, which workloads name.
	Datasets []*Dataset
	// ReadFiles are the files the plan read while it loaded, besides its own (prompt_file,
	// file()): absolute, in the order first read. A Kubernetes Job carries them to its pod.
	ReadFiles []string

	ctx *hcl.EvalContext // var, local, backend, hardware, workload, server and functions
	// failedMatrices are the matrices that could not be decoded, whose cells are unknown.
	failedMatrices []string
	// failed marks the backend, hardware and workload blocks that failed to decode and
	// stand in for themselves while the rest of a refused plan is checked.
	failed map[any]bool
}

// rootSchema is the one top-level schema; Load switches on block.Type.
var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
		{Type: "backend", LabelNames: []string{"kind", "name"}},
		{Type: "server", LabelNames: []string{"name"}},
		{Type: "hardware", LabelNames: []string{"name"}},
		{Type: "workload", LabelNames: []string{"name"}},
		{Type: "matrix", LabelNames: []string{"name"}},
		{Type: "reference", LabelNames: []string{"name"}},
		{Type: "expect", LabelNames: []string{"name"}},
		{Type: "decision", LabelNames: []string{"name"}},
		{Type: "output", LabelNames: []string{"kind"}},
		{Type: "dataset", LabelNames: []string{"name"}},
	},
}

// Load reads a plan from path: one .hcl file, or a directory whose *.hcl files form one
// plan. All problems found are returned together; the plan is nil when any is an error.
func Load(path string, opts LoadOptions) (*Plan, hcl.Diagnostics) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read plan",
			Detail:   err.Error() + "." + missingPlanHint(path),
		}}
	}
	var names []string
	dir := filepath.Dir(path)
	if info.IsDir() {
		dir = path
		matches, err := filepath.Glob(filepath.Join(path, "*.hcl"))
		if err != nil || len(matches) == 0 {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "No plan files",
				Detail:   fmt.Sprintf("The directory %s holds no *.hcl files.", path),
			}}
		}
		names = matches
	} else {
		names = []string{path}
	}
	srcs := make(map[string][]byte, len(names))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read plan file", Detail: err.Error()}}
		}
		srcs[n] = b
	}
	p, diags := LoadFiles(dir, srcs, opts)
	if p != nil {
		p.Path = path
	}
	if d := severalPlans(dir, diags); info.IsDir() && d != nil {
		diags = hcl.Diagnostics{d} // the duplicates are its consequence, not mistakes of their own
	}
	return p, diags
}

// LoadFiles loads a plan from sources already in memory, keyed by file name; dir is where
// relative paths (prompt_file, file(), output paths) resolve. Load is a thin wrapper.
func LoadFiles(dir string, srcs map[string][]byte, opts LoadOptions) (*Plan, hcl.Diagnostics) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Placements == nil {
		opts.Placements = testPlacements
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		absDir = dir
	}
	l := &loader{
		p:       &Plan{Dir: absDir, Files: map[string]*hcl.File{}, failed: map[any]bool{}},
		opts:    opts,
		names:   newNames(),
		dupKeys: map[string]bool{},
	}
	l.load(srcs)
	attachValues(l.diags, l.evaluated)
	placeStructure(l.diags, l.p.Files, schemaTreeWith(l.opts.Placements))
	nameLookalikes(l.diags, l.p.Files)
	explainEnvCalls(l.diags)
	l.diags = dropRepeats(l.diags)
	if l.diags.HasErrors() {
		// The caller expands only a clean plan, so the matrices that did decode are
		// expanded here: their per-cell mistakes are reported in this run too.
		_, more := l.p.expandCells()
		l.add(more)
		hideSensitive(l.diags, l.p.Variables)
		return nil, dropCascades(l.diags, l.p.Files, l.syntax)
	}
	hideSensitive(l.diags, l.p.Variables)
	return l.p, dropCascades(l.diags, l.p.Files, l.syntax)
}

// loader carries the state of one Load: diagnostics accumulate on it so each decode
// step can carry on after a problem and report everything in one go.
type loader struct {
	report // its diagnostics
	p      *Plan
	opts   LoadOptions
	names  *names
	parser *hclparse.Parser
	// localValues are the evaluated locals, by name.
	localValues map[string]cty.Value
	// syntax are the files' parse errors.
	syntax hcl.Diagnostics
	// dupKeys are the computed duplicate keys reported, by place.
	dupKeys map[string]bool
	// evaluated are the expressions with references evaluated so far, with their
	// contexts, so a message about a value can show the values it was made from.
	evaluated []evaluation
}

// dropRepeats keeps the first of diagnostics that say the same about the same place:
// an expression evaluated twice (a check that reads it again) is one mistake.
func dropRepeats(diags hcl.Diagnostics) hcl.Diagnostics {
	seen := map[string]bool{}
	kept := diags[:0:0]
	for _, d := range diags {
		k := fmt.Sprint(d.Severity, "\x00", d.Summary, "\x00", d.Detail)
		if d.Subject != nil {
			k += "\x00" + d.Subject.String()
		}
		if !seen[k] {
			seen[k] = true
			kept = append(kept, d)
		}
	}
	return kept
}

// blocksByType keeps the plan's blocks in file order, grouped for the decode phases.
type blocksByType map[string][]*hcl.Block

func (l *loader) load(srcs map[string][]byte) {
	l.parser = hclparse.NewParser()
	fileNames := make([]string, 0, len(srcs))
	for n := range srcs {
		fileNames = append(fileNames, n)
	}
	sort.Strings(fileNames)

	blocks := blocksByType{}
	for _, n := range fileNames {
		f, diags := parseFile(l.parser, n, srcs[n])
		if d := tomlConfig(n, srcs[n], diags); d != nil {
			l.add(hcl.Diagnostics{d})
			continue // its HCL parse errors would only say it is not HCL
		}
		diags, broken := unterminated(diags)
		l.add(diags)
		for _, d := range diags {
			if d.Severity == hcl.DiagError && d.Summary != duplicateKeySummary {
				l.syntax = append(l.syntax, d)
			}
		}
		if f == nil {
			continue
		}
		l.p.Files[n] = f
		content, diags := f.Body.Content(rootSchema)
		l.add(beforeLine(diags, broken))
		declareMisspelt(f, l.names)
		for _, b := range content.Blocks {
			if broken > 0 && bodyEnd(b) >= broken {
				continue // swallowed by the unterminated string: anything said about it is noise
			}
			blocks[b.Type] = append(blocks[b.Type], b)
		}
	}

	// Phase 1: declare every name, so references anywhere can be checked (and
	// misspellings get a did-you-mean) before anything is evaluated.
	l.add(declareNames(blocks, l.names))

	// Phase 2: variables and locals give the evaluation context.
	l.decodeVariables(blocks["variable"])
	l.decodeLocals(blocks["locals"])
	ctx := evalContext(l.p, l.names, l.localValues)

	// Phase 3: the typed blocks, in dependency order: servers before the backends
	// that name them, everything before the matrices that combine them.
	decodeEach(&l.p.Servers, blocks["server"], ctx, l.decodeServerBlock)
	decodeEach(&l.p.Datasets, blocks["dataset"], ctx, l.decodeDatasetBlock)
	setRefObjects(ctx, l.p, l.names)
	decodeEach(&l.p.Backends, blocks["backend"], ctx, l.decodeBackendBlock)
	decodeEach(&l.p.Hardware, blocks["hardware"], ctx, l.decodeHardwareBlock)
	decodeEach(&l.p.Workloads, blocks["workload"], ctx, l.decodeWorkloadBlock)
	l.add(checkCurrencies(l.p.prices()))
	setRefObjects(ctx, l.p, l.names)
	decodeEach(&l.p.Matrices, blocks["matrix"], ctx, l.decodeMatrixBlock)
	decodeEach(&l.p.References, blocks["reference"], ctx, l.decodeReferenceBlock)
	decodeEach(&l.p.Expects, blocks["expect"], ctx, l.decodeExpectBlock)
	for _, b := range blocks["decision"] {
		d, diags := decodeDecisionBlock(b, ctx)
		l.add(diags)
		if d != nil {
			l.p.Decisions = append(l.p.Decisions, d)
		}
	}
	decodeEach(&l.p.Outputs, blocks["output"], ctx, l.decodeOutputBlock)
	l.p.ctx = ctx
	l.p.Hash = planHash(fileNames, srcs, l.p.Variables)
}

// tomlHeader is a TOML table header on a line of its own ("[server]").
var tomlHeader = regexp.MustCompile(`(?m)^\[\[?[A-Za-z0-9_.\-" ]+\]\]?[ \t]*(#.*)?\r?$`)

// tomlConfig recognises a TOML file given as a plan (the seed's config.toml), by its
// extension, or by a table header where HCL's parse failed, and says how to turn it into
// a plan, instead of the HCL parse errors its first header gets.
func tomlConfig(name string, src []byte, parsed hcl.Diagnostics) *hcl.Diagnostic {
	loc := tomlHeader.FindIndex(src)
	byName := strings.HasSuffix(strings.ToLower(name), ".toml")
	if !byName && (loc == nil || !parsed.HasErrors()) {
		return nil
	}
	pos := hcl.Pos{Line: 1, Column: 1}
	if loc != nil {
		pos.Line = 1 + bytes.Count(src[:loc[0]], []byte("\n"))
		pos.Byte = loc[0]
	}
	end := pos
	end.Column, end.Byte = 2, pos.Byte+1
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Not a plan: a TOML config",
		Detail: fmt.Sprintf("planrun reads plans written in HCL; %s is TOML (like the seed's config.toml). "+
			"Turn it into an equivalent plan with `planrun convert %s -o plan.hcl`, then validate or apply plan.hcl.", name, name),
		Subject: &hcl.Range{Filename: name, Start: pos, End: end},
	}
}

// noCells is the error for a plan that declares no matrix, so no cell: an empty file,
// one of comments only, or backends and workloads with nothing combining them. Without
// it validate says "0 cells" and apply blames its -only filter.
func (p *Plan) noCells() hcl.Diagnostics {
	if len(p.Matrices) > 0 || len(p.failedMatrices) > 0 {
		return nil
	}
	var first string
	for n := range p.Files {
		if first == "" || n < first {
			first = n
		}
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Plan declares no cells",
		Detail: "The plan has no matrix block, so there is nothing to run. Cells come from a matrix over models, tools (backends) and workloads, e.g.\n\n" +
			"  matrix \"m\" {\n    model    = [\"tiny\"]\n    tool     = [backend.ollama.local]\n    workload = [workload.short]\n  }\n\nexamples/quickstart.hcl is a complete plan.",
		Subject: &hcl.Range{Filename: first, Start: hcl.Pos{Line: 1, Column: 1}, End: hcl.Pos{Line: 1, Column: 1}},
	}}
}

// declareMisspelt declares the names of top-level blocks whose type is misspelt
// (worklaod "w"), under the type meant, without decoding them: references to them are
// then known but unknown in value, so the misspelt type is the one error, not also
// every reference to workload.w.
func declareMisspelt(f *hcl.File, n *names) {
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return
	}
	var types []string
	for _, s := range rootSchema.Blocks {
		types = append(types, s.Type)
	}
	for _, b := range body.Blocks {
		if slices.Contains(types, b.Type) || len(b.Labels) == 0 {
			continue
		}
		switch suggest.Nearest(b.Type, types) {
		case "variable":
			n.vars[b.Labels[0]] = true
		case "workload":
			n.workloads[b.Labels[0]] = true
		case "hardware":
			n.hardware[b.Labels[0]] = true
		case "server":
			n.servers[b.Labels[0]] = true
		case "dataset":
			n.datasets[b.Labels[0]] = true
		case "backend":
			if len(b.Labels) == 2 {
				if n.backends[b.Labels[0]] == nil {
					n.backends[b.Labels[0]] = map[string]bool{}
				}
				n.backends[b.Labels[0]][b.Labels[1]] = true
			}
		}
	}
}

// declareNames records every declared name and reports duplicates and malformed labels.
func declareNames(blocks blocksByType, n *names) hcl.Diagnostics {
	var rep report
	first := map[string]*hcl.Block{}
	for _, typ := range []string{"variable", "backend", "server", "hardware", "workload", "matrix", "reference", "expect", "decision", "dataset"} {
		for _, b := range blocks[typ] {
			for i, lab := range b.Labels {
				if typ == "backend" && i == 0 {
					continue // the kind is checked against the known kinds below
				}
				if !validName(lab) {
					rep.errorf(b.LabelRanges[i].Ptr(), "Invalid name",
						"A %s name starts with a letter or underscore and holds only letters, digits, underscores and dashes, so it can be referenced; %q is not such a name.%s", typ, lab, nonASCIIName(lab))
				}
			}
			key := typ + "." + strings.Join(b.Labels, ".")
			if prev, dup := first[key]; dup {
				rep.errorf(labelsRange(b), "Duplicate "+typ+" block",
					"A %s named %q was already declared at %s. Names must be unique.", typ, strings.Join(b.Labels, "."), prev.DefRange)
				continue
			}
			first[key] = b
			switch typ {
			case "variable":
				n.vars[b.Labels[0]] = true
			case "backend":
				if _, ok := backends.LookupKind(b.Labels[0]); !ok {
					rep.errorf(b.LabelRanges[0].Ptr(), "Unknown backend kind",
						"A backend's kind is one of %s, not %q.%s", quoteList(kindNames()), b.Labels[0], kindSuggestion(b.Labels[0]))
					// Its references (backend.olama.o) are known but undecoded: the
					// misspelt kind is the one mistake, not every place that names it.
					if n.backends[b.Labels[0]] == nil {
						n.backends[b.Labels[0]] = map[string]bool{}
					}
					n.backends[b.Labels[0]][b.Labels[1]] = true
					continue
				}
				n.backends[b.Labels[0]][b.Labels[1]] = true
			case "server":
				n.servers[b.Labels[0]] = true
			case "hardware":
				n.hardware[b.Labels[0]] = true
			case "workload":
				n.workloads[b.Labels[0]] = true
			case "dataset":
				n.datasets[b.Labels[0]] = true
			}
		}
	}
	// Locals are declared by attribute, possibly across several locals blocks.
	firstLocal := map[string]*hcl.Attribute{}
	for _, b := range blocks["locals"] {
		attrs, diags := b.Body.JustAttributes()
		rep.add(diags)
		for _, a := range attrs {
			if prev, dup := firstLocal[a.Name]; dup {
				rep.errorf(a.NameRange.Ptr(), "Duplicate local value",
					"A local value named %q was already defined at %s.", a.Name, prev.NameRange)
				continue
			}
			firstLocal[a.Name] = a
			n.locals[a.Name] = true
		}
	}
	return rep.diags
}

// swallowing are the parse errors after which the rest of a file is read wrongly: a
// missing closing quote or brace.
var swallowing = []string{"Unterminated template string", "Unclosed configuration block"}

// unterminated finds the first missing closing quote or brace and drops the errors it
// causes on every later line ("Invalid multi-line string" on each): one missing quote
// is one error. broken is the line it starts on, 0 when there is none.
func unterminated(diags hcl.Diagnostics) (kept hcl.Diagnostics, broken int) {
	for _, d := range diags {
		if slices.Contains(swallowing, d.Summary) && d.Subject != nil && (broken == 0 || d.Subject.Start.Line < broken) {
			broken = d.Subject.Start.Line
		}
	}
	if broken == 0 {
		return diags, 0
	}
	for _, d := range diags {
		if slices.Contains(swallowing, d.Summary) || d.Subject == nil || d.Subject.Start.Line < broken {
			kept = append(kept, d)
		}
	}
	return kept, broken
}

// bodyEnd is the last line of a block's body.
func bodyEnd(b *hcl.Block) int {
	if sb, ok := b.Body.(*hclsyntax.Body); ok {
		return sb.SrcRange.End.Line
	}
	return b.DefRange.End.Line
}

// beforeLine keeps the diagnostics that start before line (all when line is 0).
func beforeLine(diags hcl.Diagnostics, line int) hcl.Diagnostics {
	if line == 0 {
		return diags
	}
	var kept hcl.Diagnostics
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Start.Line < line {
			kept = append(kept, d)
		}
	}
	return kept
}

func labelsRange(b *hcl.Block) *hcl.Range {
	if len(b.LabelRanges) == 0 {
		return b.TypeRange.Ptr()
	}
	r := hcl.RangeBetween(b.LabelRanges[0], b.LabelRanges[len(b.LabelRanges)-1])
	return &r
}

// hash is over the plan's bytes and the resolved variable values, so a changed -var
// changes the hash even when no file changed.
func planHash(fileNames []string, srcs map[string][]byte, vars []*Variable) string {
	h := sha256.New()
	for _, n := range fileNames {
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(n), len(srcs[n]))
		h.Write(srcs[n])
	}
	for _, v := range vars {
		b, err := ctyjson.Marshal(v.Value, cty.DynamicPseudoType)
		if err != nil {
			b = []byte(v.Value.GoString())
		}
		fmt.Fprintf(h, "var.%s=%s\n", v.Name, b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// read records a file the plan read while it loaded (Plan.ReadFiles).
func (p *Plan) read(path string) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if !slices.Contains(p.ReadFiles, path) {
		p.ReadFiles = append(p.ReadFiles, path)
	}
}

// resolvePath makes a plan-relative path absolute.
func (l *loader) resolvePath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.p.Dir, p)
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// standIn keeps a block that failed to decode: references to it stay known by name,
// so the excludes and cells that name it are still checked (without blaming them),
// while its other attributes are unknown. A plan with a stand-in is refused anyway.
func standIn[T any](l *loader, v *T) *T {
	l.p.failed[v] = true
	return v
}

// prices are the price blocks of the plan's backends and hardware, in declaration order.
func (p *Plan) prices() []*Price {
	var out []*Price
	for _, b := range p.Backends {
		out = append(out, b.Price)
	}
	for _, h := range p.Hardware {
		out = append(out, h.Price)
	}
	return out
}

// objectOf is a block's value for references: a stand-in's is known only by name.
func (p *Plan) objectOf(b interface{ object() cty.Value }) cty.Value {
	v := b.object()
	if !p.failed[b] {
		return v
	}
	attrs := v.AsValueMap()
	for k, av := range attrs {
		if !slices.Contains([]string{"ref", "name", "kind", "addr"}, k) {
			attrs[k] = cty.UnknownVal(av.Type())
		}
	}
	return cty.ObjectVal(attrs)
}

// decodeEach decodes every block of one type into dst, appending as it goes so each
// decoder sees the blocks before it (to report a duplicate where the first one was).
func decodeEach[T any](dst *[]*T, blocks []*hcl.Block, ctx *hcl.EvalContext, decode func(*hcl.Block, *hcl.EvalContext) *T) {
	for _, b := range blocks {
		if v := decode(b, ctx); v != nil {
			*dst = append(*dst, v)
		}
	}
}
