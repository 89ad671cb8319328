package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Matrix is a `matrix "<name>"` block: the cartesian product of its dimensions, less
// the exclude blocks, plus the include blocks. Per-cell expressions (model_id, server,
// notes) are kept unevaluated and evaluated per cell with matrix.* in scope.
type Matrix struct {
	Name          string
	Models        []string
	Quantizations []string // [""] when the matrix does not vary quantization
	Tools         []*Backend
	Hardware      []*Hardware // [nil] when the matrix names no hardware (a hosted gateway)
	Workloads     []*Workload
	// ModelID, Server and Notes are the per-cell expressions; nil means the default
	// (model_id = matrix.model, server = the backend's server, notes = "").
	ModelID, Server, Notes hcl.Expression
	// URL, when set, gives each cell its backend's URL (e.g. following
	// matrix.hardware.host), so one backend block serves every host.
	URL hcl.Expression
	// Quality is the matrix's quality block (quality.go); nil without one.
	Quality   *Quality
	DeclRange hcl.Range

	excludes      []map[string][]string // dimension → keys, a cell matching all is dropped
	excludeRanges []hcl.Range
	includes      []*matrixInclude
	// unknown marks dimensions whose values depend on a block or variable that failed:
	// checks against their values would blame a correct line, so they are skipped.
	unknown map[string]bool
	// cellExprs are the per-cell expressions (the matrix's and its includes'), checked
	// with unknown matrix.* values when the matrix cannot be expanded.
	cellExprs []*hcl.Attribute
	// hasHardware: the matrix has a hardware dimension (its cells' matrix.hardware is
	// an object, not null).
	hasHardware bool
}

// matrixInclude adds one combination (or, when it equals an existing cell, overrides
// that cell's per-cell expressions), as GitHub Actions' include does.
type matrixInclude struct {
	model, quantization   string
	tool                  *Backend
	hardware              *Hardware
	workload              *Workload
	modelID, server, note hcl.Expression
}

// Cell is one combination of a matrix: what apply runs, at each of the workload's
// concurrency levels.
type Cell struct {
	// ID is "<matrix>/<model>/<quantization>/<kind.name>/<hardware>/<workload>", with "-"
	// for a dimension the matrix does not set. Stable across runs and edits elsewhere.
	ID           string
	Matrix       string
	Model        string
	Quantization string
	// ModelID is the name the server knows the model by.
	ModelID  string
	Notes    string
	Backend  *Backend
	Hardware *Hardware // nil when the matrix names none
	Workload *Workload
	Server   *Server // nil when no plan-managed server is needed
	// Quality is the cell's matrix's quality block and QualityReference the id of the
	// cell it is compared with (its own id on the reference); nil and "" without one.
	Quality          *Quality
	QualityReference string
}

var matrixSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "model", Required: true}, {Name: "quantization"}, {Name: "tool", Required: true},
		{Name: "hardware"}, {Name: "workload", Required: true},
		{Name: "model_id"}, {Name: "server"}, {Name: "notes"}, {Name: "url"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "exclude"}, {Type: "include"}, {Type: "quality"}},
}

var excludeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "model"}, {Name: "quantization"}, {Name: "tool"}, {Name: "hardware"}, {Name: "workload"},
	},
}

var includeSchema = &hcl.BodySchema{
	Attributes: append(append([]hcl.AttributeSchema(nil), excludeSchema.Attributes...),
		hcl.AttributeSchema{Name: "model_id"}, hcl.AttributeSchema{Name: "server"}, hcl.AttributeSchema{Name: "notes"}),
}

func (l *loader) decodeMatrixBlock(b *hcl.Block, ctx *hcl.EvalContext) *Matrix {
	name := b.Labels[0]
	if !validName(name) {
		// Reported by declare; the globs that name it are not a second mistake.
		l.p.failedMatrices = append(l.p.failedMatrices, name)
		return nil
	}
	for _, prev := range l.p.Matrices {
		if prev.Name == name {
			return nil
		}
	}
	m := &Matrix{Name: name, DeclRange: b.DefRange, unknown: map[string]bool{}}
	content, diags := b.Body.Content(matrixSchema)
	l.add(diags)
	before := len(l.diags)
	a := content.Attributes

	for _, v := range l.dimension(m, "model", a["model"], ctx) {
		m.Models = append(m.Models, v.key)
	}
	m.Quantizations = []string{""}
	if a["quantization"] != nil {
		m.Quantizations = nil
		for _, v := range l.dimension(m, "quantization", a["quantization"], ctx) {
			m.Quantizations = append(m.Quantizations, v.key)
		}
	}
	for _, v := range l.dimension(m, "tool", a["tool"], ctx) {
		m.Tools = append(m.Tools, v.backend)
	}
	m.Hardware = []*Hardware{nil}
	if a["hardware"] != nil {
		m.Hardware, m.hasHardware = nil, true
		for _, v := range l.dimension(m, "hardware", a["hardware"], ctx) {
			m.Hardware = append(m.Hardware, v.hardware)
		}
	}
	for _, v := range l.dimension(m, "workload", a["workload"], ctx) {
		m.Workloads = append(m.Workloads, v.workload)
	}

	for _, n := range []string{"model_id", "server", "notes", "url"} {
		if at := a[n]; at != nil {
			l.cellExpr(m, at)
			switch n {
			case "model_id":
				m.ModelID = at.Expr
			case "server":
				m.Server = at.Expr
			case "notes":
				m.Notes = at.Expr
			case "url":
				m.URL = at.Expr
			}
		}
	}

	for _, blk := range content.Blocks {
		switch blk.Type {
		case "exclude":
			l.decodeExclude(m, blk, ctx)
		case "include":
			l.decodeInclude(m, blk, ctx)
		case "quality":
			if m.Quality != nil {
				l.errorf(blk.DefRange.Ptr(), "Duplicate quality block", "A matrix has one quality block; the first is at %s.", m.Quality.DeclRange)
				continue
			}
			q, d := decodeQualityBlock(blk, ctx, l.p.Dir)
			l.add(d)
			m.Quality = q
		}
	}
	if hasErrorsSince(l.diags, before) || len(m.unknown) > 0 {
		l.add(checkCellExprs(m, ctx, l.opts.Placements))
		l.p.failedMatrices = append(l.p.failedMatrices, name)
		return nil
	}
	ok, sizeDiags := checkSize(m)
	l.add(sizeDiags)
	if !ok {
		l.p.failedMatrices = append(l.p.failedMatrices, name)
		return nil
	}
	if !diags.HasErrors() && len(m.includes) == 0 && m.countCells() == 0 {
		var lines []string
		for _, r := range m.excludeRanges {
			lines = append(lines, fmt.Sprint(r.Start.Line))
		}
		l.errorf(b.DefRange.Ptr(), "Matrix has no cells",
			"The exclude blocks at lines %s remove every combination of matrix %q, so it would run nothing.", strings.Join(lines, ", "), name)
		return nil
	}
	return m
}

// cellExpr checks a per-cell expression's references and keeps it for checkCellExprs.
func (l *loader) cellExpr(m *Matrix, a *hcl.Attribute) {
	d := l.names.checkRefs(a.Expr, scopeMatrix, l.p.Files)
	l.add(d)
	if !d.HasErrors() {
		m.cellExprs = append(m.cellExprs, a)
	}
}

// checkCellExprs evaluates the per-cell expressions of a matrix that cannot be
// expanded with unknown matrix.* values, so their own mistakes are reported in the
// same run as the mistake that stopped the expansion.
func checkCellExprs(m *Matrix, ctx *hcl.EvalContext, kinds []PlacementKind) hcl.Diagnostics {
	var rep report
	// The block values are unknown but typed as every cell's are, so a misspelt
	// attribute (matrix.tool.knd) is reported here too; hardware is null in the cells
	// of a matrix without a hardware dimension, so it stays untyped there.
	hw := cty.DynamicVal
	if m.hasHardware {
		hw = cty.UnknownVal((&Hardware{kinds: kinds}).object().Type())
	}
	cellCtx := ctx.NewChild()
	cellCtx.Variables = map[string]cty.Value{"matrix": cty.ObjectVal(map[string]cty.Value{
		"model": cty.UnknownVal(cty.String), "quantization": cty.UnknownVal(cty.String),
		"tool": cty.UnknownVal((&Backend{}).object().Type()), "hardware": hw,
		"workload": cty.UnknownVal((&Workload{}).object().Type()),
	})}
	for _, a := range m.cellExprs {
		v, diags := a.Expr.Value(cellCtx)
		rep.add(diags)
		// A type that can never be a string (an object, a list) is wrong for every cell.
		if !diags.HasErrors() && a.Name != "server" && v.Type() != cty.DynamicPseudoType && v.Type() != cty.String && convert.GetConversion(v.Type(), cty.String) == nil {
			rep.errorIn(a.Expr, cellCtx, a.Expr.Range().Ptr(), "Invalid "+a.Name,
				"%s must evaluate to a string for every cell; this gives %s.", a.Name, article(v.Type().FriendlyName()))
		}
	}
	return rep.diags
}

// dimElements evaluates a list of dimension values (or a single value). ok is false
// when there is nothing to check: an error (reported), null (reported as an error
// naming what) or an unknown value (dim is marked unknown, silently).
func (l *loader) dimElements(m *Matrix, dim, what string, a *hcl.Attribute, ctx *hcl.EvalContext) ([]cty.Value, bool) {
	v, ok := l.value(a.Expr, ctx, scopePlan)
	switch {
	case !ok:
		return nil, false
	case v.IsNull():
		l.errorIn(a.Expr, ctx, a.Expr.Range().Ptr(), "Invalid "+what, "%s is null; it lists the %s values, or gives one.", what, dim)
		return nil, false
	case !v.IsKnown():
		m.unknown[dim] = true
		return nil, false
	}
	if v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType() {
		return v.AsValueSlice(), true
	}
	return []cty.Value{v}, true
}

// dimValue is one value of a matrix dimension, with its id key.
type dimValue struct {
	key      string
	backend  *Backend
	hardware *Hardware
	workload *Workload
}

// dimension evaluates a dimension: a list of values, or a single value.
func (l *loader) dimension(m *Matrix, dim string, a *hcl.Attribute, ctx *hcl.EvalContext) []dimValue {
	if a == nil {
		return nil // a required attribute: its absence is reported by Content
	}
	elems, ok := l.dimElements(m, dim, dim, a, ctx)
	if !ok {
		return nil
	}
	if len(elems) == 0 {
		l.errorf(a.Expr.Range().Ptr(), "Empty matrix dimension", "%s lists no values, so matrix %q has no cells.", dim, m.Name)
		return nil
	}
	var out []dimValue
	seen := map[string]bool{}
	for i, e := range elems {
		if !e.IsKnown() {
			m.unknown[dim] = true
			continue
		}
		rng := elemRange(a.Expr, i)
		dv, ok := l.dimValue(dim, e, rng, a.Expr, ctx)
		if !ok {
			continue
		}
		if seen[dv.key] {
			l.errorf(rng, "Duplicate matrix value", "%q appears twice in %s; each cell must be unique.", dv.key, dim)
			continue
		}
		seen[dv.key] = true
		out = append(out, dv)
	}
	return out
}

// dimValue resolves one value of a dimension: a string for model and quantization; a
// block reference (or its name as a string) for tool, hardware and workload.
// expr and ctx are the attribute's, so the error shows the values it was made from.
func (l *loader) dimValue(dim string, v cty.Value, rng *hcl.Range, expr hcl.Expression, ctx *hcl.EvalContext) (dimValue, bool) {
	switch dim {
	case "model", "quantization":
		s, err := convert.Convert(v, cty.String)
		if err != nil || s.IsNull() || !s.IsKnown() || s.AsString() == "" {
			l.errorIn(expr, ctx, rng, "Invalid "+dim, "Each %s is a non-empty string.", dim)
			return dimValue{}, false
		}
		return dimValue{key: s.AsString()}, true
	case "tool":
		name, ok := refName(v, "backend.")
		if ok {
			for _, b := range l.p.Backends {
				if b.Addr == name {
					return dimValue{key: b.Addr, backend: b}, true
				}
			}
		}
		var addrs []string
		for _, b := range l.p.Backends {
			addrs = append(addrs, b.Addr)
		}
		l.errorIn(expr, ctx, rng, "Invalid tool", "A tool is a backend reference such as backend.ollama.local (or its name \"ollama.local\").%s", refSuggestion(v, "backend.", addrs))
	case "hardware":
		name, ok := refName(v, "hardware.")
		for _, h := range l.p.Hardware {
			if ok && h.Name == name {
				return dimValue{key: h.Name, hardware: h}, true
			}
		}
		l.errorIn(expr, ctx, rng, "Invalid hardware", "hardware takes hardware block references such as hardware.rtx4060.%s", refSuggestion(v, "hardware.", slices.Sorted(maps.Keys(l.names.hardware))))
	case "workload":
		name, ok := refName(v, "workload.")
		for _, w := range l.p.Workloads {
			if ok && w.Name == name {
				return dimValue{key: w.Name, workload: w}, true
			}
		}
		l.errorIn(expr, ctx, rng, "Invalid workload", "workload takes workload block references such as workload.short.%s", refSuggestion(v, "workload.", slices.Sorted(maps.Keys(l.names.workloads))))
	}
	return dimValue{}, false
}

// elemRange is the range of the i-th element of a literal list, or of the whole
// expression: the narrowest range that is known.
func elemRange(expr hcl.Expression, i int) *hcl.Range {
	if t, ok := expr.(*hclsyntax.TupleConsExpr); ok && i < len(t.Exprs) {
		return t.Exprs[i].Range().Ptr()
	}
	return expr.Range().Ptr()
}

func (l *loader) decodeExclude(m *Matrix, b *hcl.Block, ctx *hcl.EvalContext) {
	content, diags := b.Body.Content(excludeSchema)
	l.add(diags)
	ex := map[string][]string{}
	matchesNone := false
	for _, dim := range matrixDimensions {
		a := content.Attributes[dim]
		if a == nil {
			continue
		}
		elems, ok := l.dimElements(m, dim, "exclude", a, ctx)
		if ok && len(elems) == 0 {
			// An empty list matches no cell (a variable defaulting to [] skips nothing).
			l.errorIn(a.Expr, ctx, a.Expr.Range().Ptr(), "Exclude matches nothing",
				"%s is an empty list, which matches no cell, so this exclude has no effect.", dim)
			matchesNone = true
		}
		for i, e := range elems {
			if !e.IsKnown() {
				continue
			}
			rng := elemRange(a.Expr, i)
			dv, ok := l.dimValue(dim, e, rng, a.Expr, ctx)
			if !ok {
				continue
			}
			if m.unknown[dim] {
				continue // its values are not all known: "matches nothing" could be wrong
			}
			if !m.hasKey(dim, dv.key) {
				l.errorf(rng, "Exclude matches nothing", "%q is not one of matrix %q's %s values, so this exclude has no effect.%s", dv.key, m.Name, dim, suggestion(dv.key, m.keys(dim)))
				continue
			}
			ex[dim] = append(ex[dim], dv.key)
		}
	}
	if len(content.Attributes) == 0 && !diags.HasErrors() { // a misspelt dimension is reported as such
		l.errorf(b.DefRange.Ptr(), "Empty exclude", "An exclude block names at least one dimension (model, quantization, tool, hardware, workload).")
		return
	}
	if !matchesNone {
		m.excludes = append(m.excludes, ex)
		m.excludeRanges = append(m.excludeRanges, b.DefRange)
	}
}

func (l *loader) decodeInclude(m *Matrix, b *hcl.Block, ctx *hcl.EvalContext) {
	content, diags := b.Body.Content(includeSchema)
	l.add(diags)
	in := &matrixInclude{}
	ok := true
	var missing []string
	for _, dim := range matrixDimensions {
		a := content.Attributes[dim]
		if a == nil {
			// A dimension with a single value needs no repeating in an include.
			if m.unknown[dim] {
				ok = false
				continue
			}
			if len(m.keys(dim)) != 1 {
				missing = append(missing, dim)
				ok = false
				continue
			}
			in.set(dim, m.value(dim, 0))
			continue
		}
		v, good := l.value(a.Expr, ctx, scopePlan)
		if good && v.IsNull() {
			l.errorIn(a.Expr, ctx, a.Expr.Range().Ptr(), "Invalid "+dim, "An include's %s is null; give the value the added cell takes.", dim)
			good = false
		}
		if !good || !v.IsKnown() {
			ok = false
			continue
		}
		dv, good := l.dimValue(dim, v, a.Expr.Range().Ptr(), a.Expr, ctx)
		if !good {
			ok = false
			continue
		}
		in.set(dim, dv)
	}
	if len(missing) > 0 {
		l.errorf(b.DefRange.Ptr(), "Incomplete include",
			"This include must set %s: matrix %q does not have exactly one value to take for it.", quoteList(missing), m.Name)
	}
	for n, dst := range map[string]*hcl.Expression{"model_id": &in.modelID, "server": &in.server, "notes": &in.note} {
		if a := content.Attributes[n]; a != nil {
			l.cellExpr(m, a)
			*dst = a.Expr
		}
	}
	if ok {
		m.includes = append(m.includes, in)
	}
}

func (in *matrixInclude) set(dim string, v dimValue) {
	switch dim {
	case "model":
		in.model = v.key
	case "quantization":
		in.quantization = v.key
	case "tool":
		in.tool = v.backend
	case "hardware":
		in.hardware = v.hardware
	case "workload":
		in.workload = v.workload
	}
}

// keys lists a dimension's id keys ("" for an unset quantization or hardware).
func (m *Matrix) keys(dim string) []string {
	var ks []string
	switch dim {
	case "model":
		ks = m.Models
	case "quantization":
		ks = m.Quantizations
	case "tool":
		for _, b := range m.Tools {
			ks = append(ks, b.Addr)
		}
	case "hardware":
		for _, h := range m.Hardware {
			ks = append(ks, hardwareKey(h))
		}
	case "workload":
		for _, w := range m.Workloads {
			ks = append(ks, w.Name)
		}
	}
	return ks
}

func (m *Matrix) value(dim string, i int) dimValue {
	switch dim {
	case "tool":
		return dimValue{key: m.Tools[i].Addr, backend: m.Tools[i]}
	case "hardware":
		return dimValue{key: hardwareKey(m.Hardware[i]), hardware: m.Hardware[i]}
	case "workload":
		return dimValue{key: m.Workloads[i].Name, workload: m.Workloads[i]}
	}
	return dimValue{key: m.keys(dim)[i]}
}

func (m *Matrix) hasKey(dim, key string) bool { return slices.Contains(m.keys(dim), key) }

func hardwareKey(h *Hardware) string {
	if h == nil {
		return ""
	}
	return h.Name
}

// idSegment writes an unset dimension as "-" so ids keep six segments.
func idSegment(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Cells expands every matrix into cells: in matrix order, then model, quantization,
// tool, hardware, workload in the order written, less excludes, then includes. The
// order and the ids depend only on the plan text. A plan without a matrix is an error
// here, where a caller asks what to run.
func (p *Plan) Cells() ([]*Cell, hcl.Diagnostics) {
	if d := p.noCells(); d != nil {
		return nil, d
	}
	cells, diags := p.expandCells()
	hideSensitive(diags, p.Variables)
	return cells, diags
}

// expandCells is Cells without the check for a plan that declares none, for a plan
// being refused for other mistakes.
func (p *Plan) expandCells() ([]*Cell, hcl.Diagnostics) {
	var (
		cells []*Cell
		diags hcl.Diagnostics
	)
	// One broken per-cell expression would otherwise be reported once per cell.
	reported := map[string]bool{}
	addDiags := func(ds hcl.Diagnostics) {
		for _, d := range ds {
			// Keyed by place when there is one: the detail names the cell, and the same
			// mistake in every cell is one mistake.
			k := d.Summary + "\x00" + d.Detail
			if d.Subject != nil {
				k = d.Summary + "\x00" + d.Subject.String()
			}
			if !reported[k] {
				reported[k] = true
				diags = append(diags, d)
			}
		}
	}
	ids := map[string]bool{}
	for _, m := range p.Matrices {
		mc := m.expand(p, addDiags)
		for _, c := range mc {
			if ids[c.ID] {
				addDiags(hcl.Diagnostics{{
					Severity: hcl.DiagError, Summary: "Duplicate cell id",
					Detail:  fmt.Sprintf("Two cells of matrix %q have the id %q; make the model or quantization names distinct.", m.Name, c.ID),
					Subject: m.DeclRange.Ptr(),
				}})
				continue
			}
			ids[c.ID] = true
			cells = append(cells, c)
		}
	}
	addDiags(CheckCells(cells))
	addDiags(resolveQuality(p, cells))
	for _, e := range p.Expects {
		addDiags(e.checkCells(cells, p.failedMatrices))
		addDiags(e.checkFigures(cells))
	}
	for _, d := range p.Decisions {
		addDiags(d.checkCells(cells, p.failedMatrices))
	}
	if len(p.failedMatrices) == 0 {
		for _, r := range p.References {
			addDiags(r.checkCells(cells))
		}
	}
	return cells, diags
}

func (m *Matrix) expand(p *Plan, addDiags func(hcl.Diagnostics)) []*Cell {
	n := m.combinations()
	cells := make([]*Cell, 0, n+len(m.includes))
	// Only an include needs the cells by id: a large matrix without one skips the map.
	byID := map[string]*Cell{}
	m.combos(func(model, q string, t *Backend, h *Hardware, w *Workload) {
		c := m.cell(model, q, t, h, w)
		m.evalCell(p, c, m.ModelID, m.Server, m.Notes, addDiags)
		cells = append(cells, c)
		if len(m.includes) > 0 {
			byID[c.ID] = c
		}
	})
	for _, in := range m.includes {
		c := m.cell(in.model, in.quantization, in.tool, in.hardware, in.workload)
		if prev, ok := byID[c.ID]; ok {
			c = prev
		} else {
			m.evalCell(p, c, m.ModelID, m.Server, m.Notes, addDiags)
			cells = append(cells, c)
			byID[c.ID] = c
		}
		// The include's own expressions override the matrix's for its cell.
		m.evalCell(p, c, in.modelID, in.server, in.note, addDiags)
	}
	return cells
}

// combos calls f for each combination the excludes leave, in id order.
func (m *Matrix) combos(f func(model, q string, t *Backend, h *Hardware, w *Workload)) {
	for _, model := range m.Models {
		for _, q := range m.Quantizations {
			for _, t := range m.Tools {
				for _, h := range m.Hardware {
					for _, w := range m.Workloads {
						if !m.excluded(model, q, t, h, w) {
							f(model, q, t, h, w)
						}
					}
				}
			}
		}
	}
}

// countCells is the number of combinations the excludes leave (includes not counted).
func (m *Matrix) countCells() int {
	n := 0
	m.combos(func(string, string, *Backend, *Hardware, *Workload) { n++ })
	return n
}

func (m *Matrix) cell(model, q string, t *Backend, h *Hardware, w *Workload) *Cell {
	id := strings.Join([]string{m.Name, model, idSegment(q), t.Addr, idSegment(hardwareKey(h)), w.Name}, "/")
	return &Cell{
		ID: id, Matrix: m.Name, Model: model, Quantization: q, ModelID: model,
		Backend: t, Hardware: h, Workload: w, Server: t.Server,
	}
}

func (m *Matrix) excluded(model, q string, t *Backend, h *Hardware, w *Workload) bool {
	for _, ex := range m.excludes {
		if matchesAll(ex, model, q, t.Addr, hardwareKey(h), w.Name) {
			return true
		}
	}
	return false
}

func matchesAll(ex map[string][]string, model, q, tool, hw, wl string) bool {
	for dim, ks := range ex {
		var v string
		switch dim {
		case "model":
			v = model
		case "quantization":
			v = q
		case "tool":
			v = tool
		case "hardware":
			v = hw
		case "workload":
			v = wl
		}
		if !slices.Contains(ks, v) {
			return false
		}
	}
	return true
}

// evalCell evaluates the per-cell expressions that are set, with matrix.* in scope.
func (m *Matrix) evalCell(p *Plan, c *Cell, modelID, server, notes hcl.Expression, addDiags func(hcl.Diagnostics)) {
	if modelID == nil && server == nil && notes == nil && m.URL == nil {
		return
	}
	hw := cty.NullVal(cty.DynamicPseudoType)
	if c.Hardware != nil {
		hw = p.objectOf(c.Hardware)
	}
	ctx := p.ctx.NewChild()
	ctx.Variables = map[string]cty.Value{"matrix": cty.ObjectVal(map[string]cty.Value{
		"model":        cty.StringVal(c.Model),
		"quantization": cty.StringVal(c.Quantization),
		"tool":         p.objectOf(c.Backend),
		"hardware":     hw,
		"workload":     p.objectOf(c.Workload),
	})}
	str := func(expr hcl.Expression, dst *string, what string) {
		v, diags := expr.Value(ctx)
		diags = explainIndex(diags, c.ID)
		if !diags.HasErrors() && v.IsKnown() { // unknown: it uses something that failed, reported already
			var err error
			if v, err = convert.Convert(v, cty.String); err != nil || v.IsNull() {
				diags = diags.Append(&hcl.Diagnostic{
					Severity: hcl.DiagError, Summary: "Invalid " + what,
					Detail:  fmt.Sprintf("%s must evaluate to a string for every cell; for %s it does not.", what, c.ID),
					Subject: expr.Range().Ptr(), Expression: expr, EvalContext: ctx,
				})
			} else {
				*dst = v.AsString()
			}
		}
		addDiags(diags)
	}
	if modelID != nil {
		str(modelID, &c.ModelID, "model_id")
	}
	if notes != nil {
		str(notes, &c.Notes, "notes")
	}
	if m.URL != nil {
		u := c.Backend.URL
		str(m.URL, &u, "url")
		if _, ok := httpURL(u); !ok {
			addDiags(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid url",
				Detail: fmt.Sprintf("url gives cell %s the backend URL %q, which is not an http:// URL.%s", c.ID, u, urlSuggestion(u)), Subject: m.URL.Range().Ptr(), Expression: m.URL, EvalContext: ctx}})
		}
		be := *c.Backend // the cell's own copy: other cells keep theirs
		be.URL = u
		c.Backend = &be
	}
	if server != nil {
		v, diags := server.Value(ctx)
		addDiags(explainIndex(diags, c.ID))
		if diags.HasErrors() || !v.IsKnown() {
			return
		}
		if v.IsNull() {
			c.Server = nil // explicitly no plan-managed server for this cell
			return
		}
		name, ok := refName(v, "server.")
		for _, s := range p.Servers {
			if ok && s.Name == name {
				c.Server = s
				return
			}
		}
		var ns []string
		for _, s := range p.Servers {
			ns = append(ns, s.Name)
		}
		addDiags(hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Invalid server reference",
			Detail:  fmt.Sprintf("server must name a server block (server.<name>); for cell %s it gives %q.%s", c.ID, name, suggestion(name, ns)),
			Subject: server.Range().Ptr(), Expression: server, EvalContext: ctx,
		}})
	}
}

// explainIndex rewrites HCL's "Invalid index" (a key missing from a map or object,
// e.g. server["vllm_${matrix.quantization}"]) to name the cell, the key and the keys
// that exist.
func explainIndex(diags hcl.Diagnostics, cellID string) hcl.Diagnostics {
	for i, d := range diags {
		ix, ok := d.Expression.(*hclsyntax.IndexExpr)
		if d.Summary != "Invalid index" || !ok || d.EvalContext == nil {
			continue
		}
		coll, cd := ix.Collection.Value(d.EvalContext)
		key, kd := ix.Key.Value(d.EvalContext)
		if cd.HasErrors() || kd.HasErrors() || !coll.IsKnown() || coll.IsNull() || key.Type() != cty.String || !key.IsKnown() || key.IsNull() {
			continue
		}
		var have []string
		switch {
		case coll.Type().IsObjectType():
			have = slices.Sorted(maps.Keys(coll.Type().AttributeTypes())) // known even where the values are not
		case coll.Type().IsMapType() && coll.IsWhollyKnown():
			have = slices.Sorted(maps.Keys(coll.AsValueMap()))
		default:
			continue
		}
		nd := *d
		nd.Summary = "Missing key"
		nd.Detail = fmt.Sprintf("For cell %s, the key %q is not in %s, whose keys are %s.%s",
			cellID, key.AsString(), exprText(ix.Collection), quoteList(have), suggestion(key.AsString(), have))
		diags[i] = &nd
	}
	return diags
}

// exprText is a short name for an expression: its traversal (server, local.ids) or "this value".
func exprText(expr hcl.Expression) string {
	if t, d := hcl.AbsTraversalForExpr(expr); !d.HasErrors() {
		return traversalText(t)
	}
	return "this value"
}
