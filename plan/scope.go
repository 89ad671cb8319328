package plan

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/internal/suggest"
)

// names holds every declared name, filled before evaluation so that a reference to an
// unknown name is reported with a did-you-mean instead of HCL's generic message.
type names struct {
	vars, locals                 map[string]bool
	backends                     map[string]map[string]bool // kind → name
	hardware, workloads, servers map[string]bool
	datasets                     map[string]bool
}

func newNames() *names {
	n := &names{
		vars: map[string]bool{}, locals: map[string]bool{},
		backends: map[string]map[string]bool{},
		hardware: map[string]bool{}, workloads: map[string]bool{}, servers: map[string]bool{},
		datasets: map[string]bool{},
	}
	for _, k := range kindNames() {
		n.backends[k] = map[string]bool{}
	}
	return n
}

// scope says which roots an expression may reference.
type scope int

const (
	scopePlan   scope = iota // var, local, backend, server, hardware, workload
	scopeLocals              // var and local only: locals are evaluated before the blocks
	scopeVars                // var only: variable validations
	scopeMatrix              // scopePlan plus matrix.*: a matrix's per-cell expressions
	scopeResult              // var, local and result.*: expect conditions
	scopeGoal                // as scopeResult, for a workload's goal
)

// matrixDimensions are the attributes of matrix.* in per-cell expressions.
var matrixDimensions = []string{"model", "quantization", "tool", "hardware", "workload"}

// checkRefs reports every reference in expr to something that does not exist or is not
// available in scope s, with a did-you-mean where a near name exists; and each map key
// written bare that HCL would read as an expression (nvidia.com/gpu), whose names are
// then no references.
func (n *names) checkRefs(expr hcl.Expression, s scope, files map[string]*hcl.File) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var keys []hcl.Range
	if f := files[expr.Range().Filename]; f != nil {
		diags, keys = unquotedKeys(expr, f.Bytes, rootsIn(s))
	}
	for _, t := range expr.Variables() {
		if inAny(t.SourceRange(), keys) {
			continue
		}
		if d := n.refProblem(t, s); d != nil {
			diags = append(diags, d)
		}
	}
	return diags
}

// refError is the error for a traversal that is wrong up to its step upto.
func refError(t hcl.Traversal, upto int, summary, format string, args ...any) *hcl.Diagnostic {
	r := t.SourceRange()
	if upto < len(t) {
		r = hcl.RangeBetween(t[0].SourceRange(), t[upto].SourceRange())
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r}
}

// refProblem is what is wrong with one reference in scope s, or nil.
func (n *names) refProblem(t hcl.Traversal, s scope) *hcl.Diagnostic {
	root, allowed := t.RootName(), rootsIn(s)
	switch {
	case !slices.Contains(allowed, root) && slices.Contains(allRoots, root):
		return refError(t, 0, "Reference not available here",
			"%s.* cannot be used here; this expression may reference %s.", root, quoteList(allowed))
	case !slices.Contains(allowed, root):
		return refError(t, 0, "Unknown variable", "There is no variable named %q.%s", root, suggestion(root, allowed))
	}
	name := attrStep(t, 1)
	if name == "" {
		return nil // a whole-object reference such as var or backend.ollama: left to evaluation
	}
	switch root {
	case "var", "local":
		return n.valueRefProblem(t, root, name)
	case "backend":
		return n.backendRefProblem(t, name)
	case "server", "hardware", "workload", "dataset":
		set := map[string]map[string]bool{"server": n.servers, "hardware": n.hardware, "workload": n.workloads, "dataset": n.datasets}[root]
		if !set[name] && !set[dottedName(t, 1, set)] {
			return refError(t, 1, "Reference to undeclared "+root,
				"No %s %q is declared.%s", root, name, suggestion(name, slices.Sorted(maps.Keys(set))))
		}
	case "matrix":
		if !slices.Contains(matrixDimensions, name) {
			return refError(t, 1, "Unknown matrix dimension",
				"matrix has the attributes %s.%s", quoteList(matrixDimensions), suggestion(name, matrixDimensions))
		}
	case "result":
		return resultRefProblem(t, name, s)
	}
	return nil
}

// valueRefProblem is the error of a reference to a variable or local value the plan
// does not declare; nil when it does.
func (n *names) valueRefProblem(t hcl.Traversal, root, name string) *hcl.Diagnostic {
	switch {
	case root == "var" && !n.vars[name]:
		return refError(t, 1, "Reference to undeclared variable",
			"No variable %q is declared; declare it with a variable block.%s", name, suggestion(name, slices.Sorted(maps.Keys(n.vars))))
	case root == "local" && !n.locals[name]:
		return refError(t, 1, "Reference to undeclared local value",
			"No local value %q is defined in a locals block.%s", name, suggestion(name, slices.Sorted(maps.Keys(n.locals))))
	}
	return nil
}

// backendRefProblem is what is wrong with backend.<kind>.<name>, or nil.
func (n *names) backendRefProblem(t hcl.Traversal, kind string) *hcl.Diagnostic {
	byName, ok := n.backends[kind]
	if !ok {
		return refError(t, 1, "Unknown backend kind",
			"A backend is referenced as backend.<kind>.<name>, with kind %s.%s", quoteList(kindNames()), suggestion(kind, kindNames()))
	}
	bname := attrStep(t, 2)
	if bname == "" || byName[bname] || byName[dottedName(t, 2, byName)] {
		return nil
	}
	var all, sameName []string
	for k, ns := range n.backends {
		for name := range ns {
			all = append(all, "backend."+k+"."+name)
			if name == bname {
				sameName = append(sameName, "backend."+k+"."+name)
			}
		}
	}
	hint := suggestion("backend."+kind+"."+bname, all)
	if len(sameName) > 0 { // the name is right, the kind is not: far by edits, near in meaning
		sort.Strings(sameName)
		hint = fmt.Sprintf(" Backend %q is declared as %s. Did you mean %s?", bname, quoteList(sameName), sameName[0])
	}
	return refError(t, 2, "Reference to undeclared backend", "No backend %q %q is declared.%s", kind, bname, hint)
}

// resultRefProblem is what is wrong with result.<name> in a condition or goal, or nil.
func resultRefProblem(t hcl.Traversal, name string, s scope) *hcl.Diagnostic {
	if slices.Contains(ResultVariables, name) {
		return nil
	}
	what := "An expect condition"
	if s == scopeGoal {
		what = "A goal"
	}
	// The near names say it; without one, where the figures are listed (over a hundred
	// names are no hint).
	hint := suggestion(name, ResultVariables)
	if hint == "" {
		hint = " The figures are listed in docs/plan.md (expect) and ledger/fields.go."
	}
	return refError(t, 1, "Unknown result value", "%s can use result.<figure>, and there is no %q.%s", what, name, hint)
}

// dottedName is the name a traversal spells with its dots from step from on, when that
// name is in set:
// workload.short.prompts names a workload declared "short.prompts", an invalid name
// reported where it is declared, so the reference is no second mistake.
func dottedName(t hcl.Traversal, from int, set map[string]bool) string {
	name := attrStep(t, from)
	for i := from + 1; attrStep(t, i) != ""; i++ {
		name += "." + attrStep(t, i)
		if set[name] {
			return name
		}
	}
	return ""
}

var allRoots = []string{"var", "local", "backend", "server", "hardware", "workload", "dataset", "matrix", "result"}

func rootsIn(s scope) []string {
	switch s {
	case scopeVars:
		return []string{"var"}
	case scopeLocals:
		return []string{"var", "local"}
	case scopeMatrix:
		return []string{"var", "local", "backend", "server", "hardware", "workload", "matrix"}
	case scopeResult, scopeGoal:
		return []string{"var", "local", "result"}
	}
	return []string{"var", "local", "backend", "server", "hardware", "workload", "dataset"}
}

// attrStep is the name at step i of a traversal (attribute or string index), or "".
func attrStep(t hcl.Traversal, i int) string {
	if i >= len(t) {
		return ""
	}
	switch s := t[i].(type) {
	case hcl.TraverseAttr:
		return s.Name
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
			return s.Key.AsString()
		}
	}
	return ""
}

// eval checks expr's references, then evaluates it. ok is false when it could not be
// evaluated (the problem is already recorded) or when it is null, which means "not set".
// An unknown result means it depends on a block that failed to decode, whose problem is
// already reported, so it is skipped silently too.
func (l *loader) eval(expr hcl.Expression, ctx *hcl.EvalContext, s scope) (cty.Value, bool) {
	v, ok := l.value(expr, ctx, s)
	if !ok || v.IsNull() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return v, true
}

// value checks expr's references, then evaluates it; ok is false when either failed
// (the problem is recorded). Null and unknown values are the caller's to judge.
func (l *loader) value(expr hcl.Expression, ctx *hcl.EvalContext, s scope) (cty.Value, bool) {
	if d := l.names.checkRefs(expr, s, l.p.Files); d.HasErrors() {
		l.add(d)
		return cty.NilVal, false
	}
	v, d := expr.Value(ctx)
	l.add(d)
	if !d.HasErrors() {
		for _, dd := range computedDuplicateKeys(expr, ctx) {
			if k := dd.Subject.String(); !l.dupKeys[k] { // an attribute may be evaluated twice
				l.dupKeys[k] = true
				l.add(hcl.Diagnostics{dd})
			}
		}
	}
	if len(expr.Variables()) > 0 {
		l.evaluated = append(l.evaluated, evaluation{expr, ctx})
	}
	return v, !d.HasErrors()
}

// isNull reports whether an attribute is absent or set to null, both meaning "not
// set"; an attribute that fails to evaluate or is unknown is not null.
func isNull(a *hcl.Attribute, ctx *hcl.EvalContext) bool {
	if a == nil {
		return true
	}
	v, diags := a.Expr.Value(ctx)
	return !diags.HasErrors() && v.IsNull()
}

// nullArg reports an attribute that is set but evaluates to null with the values given
// (a conditional over variables, say) where a value is needed, with the values it was
// made from; need says what the value is for. No diagnostics: a value, or no attribute.
func nullArg(a *hcl.Attribute, ctx *hcl.EvalContext, need string) hcl.Diagnostics {
	if a == nil || !isNull(a, ctx) {
		return nil
	}
	var r report
	r.errorIn(a.Expr, ctx, a.Expr.Range().Ptr(), "Null "+a.Name, "%s evaluates to null with the values given; %s.", a.Name, need)
	return r.diags
}

// decode evaluates an attribute into a Go leaf value with gohcl; false leaves target as
// it was (the default).
func (l *loader) decode(a *hcl.Attribute, ctx *hcl.EvalContext, target any) bool {
	if a == nil {
		return false
	}
	v, ok := l.eval(a.Expr, ctx, scopePlan)
	if !ok {
		return false
	}
	if d := checkSuits(a, ctx, v, target); d.HasErrors() {
		l.add(d)
		return false
	}
	d := gohcl.DecodeExpression(hcl.StaticExpr(v, a.Expr.Range()), nil, target)
	l.add(d)
	return !d.HasErrors()
}

// suggestion returns " Did you mean "x"?" for the closest option, or "".
func suggestion(given string, options []string) string {
	return suggest.DidYouMean(given, options)
}

// httpURL parses s and reports whether it is an http:// or https:// URL with a host,
// the one test every URL a plan gives (backend, ready, dcgm, a cell's url) must pass. The
// host is checked without its port: "http://:9400" (an empty variable interpolated) has
// none. A scheme written twice is no URL either (a host given with its scheme, then
// interpolated into one).
func httpURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	// "http://http://host" parses with the host "http:": a scheme written twice.
	twice := err == nil && (u.Host == "http:" || u.Host == "https:")
	return u, err == nil && !twice && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != ""
}

// validName reports whether a block label can be used in a reference (name.attr).
// HCL takes any Unicode letter in a name, but a plan is ASCII outside strings
// (strangeCharacters), so a name with another letter could never be referenced.
func validName(s string) bool { return hclsyntax.ValidIdentifier(s) && isASCII(s) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// evalContext builds the plan-wide context: var and local values plus functions. The
// block objects (backend, server, ...) are added by setRefObjects as they are decoded.
func evalContext(p *Plan, n *names, localValues map[string]cty.Value) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for _, v := range p.Variables {
		vars[v.Name] = v.Value
	}
	for name := range n.vars {
		if _, ok := vars[name]; !ok {
			vars[name] = cty.DynamicVal // declared but failed: its problem is already reported
		}
	}
	locals := map[string]cty.Value{}
	for name, v := range localValues {
		locals[name] = v
	}
	for name := range n.locals {
		if _, ok := locals[name]; !ok {
			locals[name] = cty.DynamicVal
		}
	}
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(vars), "local": cty.ObjectVal(locals)},
		Functions: functions(p.Dir, p.read),
	}
}

// setRefObjects (re)builds backend.*, server.*, hardware.* and workload.* from what has
// been decoded so far. Declared but undecoded blocks are unknown values, so expressions
// that use them are skipped without a second, confusing error.
func setRefObjects(ctx *hcl.EvalContext, p *Plan, n *names) {
	servers := map[string]cty.Value{}
	for n := range n.servers {
		servers[n] = cty.DynamicVal
	}
	for _, s := range p.Servers {
		servers[s.Name] = s.object()
	}
	backendsByKind := map[string]cty.Value{}
	for kind, ns := range n.backends {
		objs := map[string]cty.Value{}
		for n := range ns {
			objs[n] = cty.DynamicVal
		}
		for _, b := range p.Backends {
			if b.Kind == kind {
				objs[b.Name] = p.objectOf(b)
			}
		}
		dottedStandIns(objs)
		backendsByKind[kind] = cty.ObjectVal(objs)
	}
	hw := map[string]cty.Value{}
	for n := range n.hardware {
		hw[n] = cty.DynamicVal
	}
	for _, h := range p.Hardware {
		hw[h.Name] = p.objectOf(h)
	}
	wl := map[string]cty.Value{}
	for n := range n.workloads {
		wl[n] = cty.DynamicVal
	}
	for _, w := range p.Workloads {
		wl[w.Name] = p.objectOf(w)
	}
	for _, m := range []map[string]cty.Value{servers, hw, wl} {
		dottedStandIns(m)
	}
	ctx.Variables["server"] = cty.ObjectVal(servers)
	ctx.Variables["backend"] = cty.ObjectVal(backendsByKind)
	ctx.Variables["hardware"] = cty.ObjectVal(hw)
	ctx.Variables["workload"] = cty.ObjectVal(wl)
	ds := map[string]cty.Value{}
	for n := range n.datasets {
		ds[n] = cty.DynamicVal
	}
	for _, d := range p.Datasets {
		ds[d.Name] = p.objectOf(d)
	}
	dottedStandIns(ds)
	ctx.Variables["dataset"] = cty.ObjectVal(ds)
}

// dottedStandIns makes a name declared with a dot ("short.prompts", invalid and
// reported) reachable as written, workload.short.prompts, as an unknown value: the
// reference then depends on a reported mistake and says nothing of its own.
func dottedStandIns(objs map[string]cty.Value) {
	for n := range objs {
		if first, _, ok := strings.Cut(n, "."); ok {
			if _, taken := objs[first]; !taken {
				objs[first] = cty.DynamicVal
			}
		}
	}
}

// refName reads a block reference: an object made by setRefObjects whose ref starts
// with prefix ("backend.", "hardware.", ...), or a plain string naming the block.
// ok is false when v is neither.
// refSuggestion is the did-you-mean for a value that is not a reference to a block
// named in names (prefix "hardware." for hardware): a reference to a block of another
// kind that shares a name with one of these points to that one ("Did you mean
// hardware.o?" for backend.ollama.o), never to the name it was given; otherwise the name
// nearest to the one given, if any.
func refSuggestion(v cty.Value, prefix string, names []string) string {
	if name, ok := refName(v, prefix); ok {
		return suggestion(name, names)
	}
	given, ok := refName(v, "")
	if !ok {
		return ""
	}
	last := given[strings.LastIndexByte(given, '.')+1:]
	kind := strings.TrimSuffix(prefix, ".")
	if !strings.Contains(given, ".") || strings.HasPrefix(given, prefix) {
		return suggestion(given, names) // a name as a string, or a ref of this kind
	}
	for _, n := range names {
		if n == last || strings.HasSuffix(n, "."+last) {
			return fmt.Sprintf(" %s is not a %s; did you mean %s%s?", given, kind, prefix, n)
		}
	}
	return fmt.Sprintf(" %s is not a %s.", given, kind)
}

func refName(v cty.Value, prefix string) (name string, ok bool) {
	switch {
	case v.IsNull() || !v.IsKnown():
		return "", false
	case v.Type() == cty.String:
		return v.AsString(), true
	case v.Type().IsObjectType() && v.Type().HasAttribute("ref"):
		ref := v.GetAttr("ref")
		if ref.Type() == cty.String && ref.IsKnown() && !ref.IsNull() && strings.HasPrefix(ref.AsString(), prefix) {
			return strings.TrimPrefix(ref.AsString(), prefix), true
		}
	}
	return "", false
}
