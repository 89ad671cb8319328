package plan

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Variable is a declared input variable with its resolved value.
type Variable struct {
	Name        string
	Description string
	Type        cty.Type
	Sensitive   bool
	Value       cty.Value
	DeclRange   hcl.Range
}

// envVarPrefix is prepended to a variable's name to read it from the environment.
const envVarPrefix = "PLANRUN_VAR_"

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"}, {Name: "default"}, {Name: "description"}, {Name: "sensitive"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message", Required: true}},
}

// rawValue is a value for a variable from outside its declaration, with where it came from.
type rawValue struct {
	expr   hcl.Expression // nil for a string taken literally
	str    string
	source string
	rng    *hcl.Range
}

// decodeVariables decodes the variable blocks and resolves each one's value, with
// precedence default < PLANRUN_VAR_<name> < -var-file (in order) < -var (in order).
func (l *loader) decodeVariables(blocks []*hcl.Block) {
	given := l.externalValues()
	for _, b := range blocks {
		name := b.Labels[0]
		if !validName(name) || l.p.variable(name) != nil {
			continue // reported by declare
		}
		v := &Variable{Name: name, Type: cty.DynamicPseudoType, DeclRange: b.DefRange}
		content, diags := b.Body.Content(variableSchema)
		l.add(diags)
		var defaults *typeexpr.Defaults
		if a := content.Attributes["type"]; a != nil {
			ty, def, diags := typeexpr.TypeConstraintWithDefaults(a.Expr)
			l.add(diags)
			if !diags.HasErrors() {
				v.Type, defaults = ty, def
			}
		}
		if a := content.Attributes["description"]; a != nil {
			l.add(gohcl.DecodeExpression(a.Expr, nil, &v.Description))
		}
		if a := content.Attributes["sensitive"]; a != nil {
			l.add(gohcl.DecodeExpression(a.Expr, nil, &v.Sensitive))
		}
		val := cty.NilVal
		valRange := b.DefRange.Ptr()
		badDefault := false
		if a := content.Attributes["default"]; a != nil {
			// A default is a constant: it cannot reference anything.
			dv, diags := a.Expr.Value(nil)
			l.add(diags)
			badDefault = diags.HasErrors()
			if !diags.HasErrors() {
				var cd hcl.Diagnostics
				val, cd = convertVar(v, defaults, dv, a.Expr.Range().Ptr(), "default")
				l.add(cd)
				valRange = a.Expr.Range().Ptr()
			}
		}
		if raws, ok := given[name]; ok {
			for _, raw := range raws {
				rv, rd := rawToValue(v, raw)
				l.add(rd)
				var cd hcl.Diagnostics
				val, cd = convertVar(v, defaults, rv, raw.rng, raw.source)
				l.add(cd)
				valRange = raw.rng
			}
			delete(given, name)
		}
		if val == cty.NilVal && badDefault {
			continue // the default's own error says it all
		}
		if val == cty.NilVal {
			l.errorf(b.DefRange.Ptr(), "No value for required variable",
				"The variable %q has no default, so it needs a value: -var '%s=...', -var-file, or the environment variable %s%s.",
				name, name, envVarPrefix, name)
			if sb, ok := b.Body.(*hclsyntax.Body); ok { // a misspelt or unreadable default says it
				premise(l.diags[len(l.diags)-1], sb.SrcRange, "default")
			}
			continue
		}
		v.Value = val
		failed := false
		for _, vb := range content.Blocks {
			failed = !l.checkValidation(v, vb, valRange) || failed
		}
		if failed {
			// Unknown, so the places that use it do not report the same mistake again.
			v.Value = cty.UnknownVal(v.Type)
		}
		l.p.Variables = append(l.p.Variables, v)
	}
	// Values for variables the plan does not declare are mistakes (a typo, usually).
	for _, name := range slices.Sorted(maps.Keys(given)) {
		raw := given[name][0]
		l.errorf(raw.rng, "Value for undeclared variable",
			"%s sets %q, which the plan does not declare.%s", raw.source, name, suggestion(name, slices.Sorted(maps.Keys(l.names.vars))))
	}
}

func (p *Plan) variable(name string) *Variable {
	for _, v := range p.Variables {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// externalValues gathers -var, -var-file and PLANRUN_VAR_ values by variable name, in
// increasing precedence.
func (l *loader) externalValues() map[string][]rawValue {
	given := map[string][]rawValue{}
	for name := range l.names.vars {
		if s := l.opts.Getenv(envVarPrefix + name); s != "" {
			given[name] = append(given[name], rawValue{str: s, source: "The environment variable " + envVarPrefix + name})
		}
	}
	for _, path := range l.opts.VarFiles {
		src, err := os.ReadFile(path)
		if err != nil {
			l.errorf(nil, "Cannot read variables file", "%s", err)
			continue
		}
		f, diags := parseFile(l.parser, path, src)
		l.add(diags)
		if f == nil {
			continue
		}
		l.p.Files[path] = f
		attrs, diags := f.Body.JustAttributes()
		l.add(diags)
		for _, name := range slices.Sorted(maps.Keys(attrs)) {
			a := attrs[name]
			given[name] = append(given[name], rawValue{expr: a.Expr, source: "The variables file " + path, rng: a.NameRange.Ptr()})
		}
	}
	for _, kv := range l.opts.Vars {
		name, val, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			l.errorf(nil, "Invalid -var option", "The -var option takes name=value, not %q.", kv)
			continue
		}
		given[name] = append(given[name], rawValue{str: val, source: fmt.Sprintf("-var '%s=...'", name)})
	}
	return given
}

// rawToValue turns a command-line or environment string into a value: taken literally
// for string variables (as Terraform does), parsed as an HCL expression otherwise.
func rawToValue(v *Variable, raw rawValue) (cty.Value, hcl.Diagnostics) {
	var r report
	fromText := raw.expr == nil
	if fromText {
		if v.Type == cty.String || v.Type == cty.DynamicPseudoType {
			return cty.StringVal(raw.str), nil
		}
		expr, diags := hclsyntax.ParseExpression([]byte(raw.str), raw.source, hcl.InitialPos)
		if diags.HasErrors() {
			hint := ""
			if (v.Type.IsListType() || v.Type.IsSetType() || v.Type.IsTupleType()) && !strings.HasPrefix(strings.TrimSpace(raw.str), "[") {
				hint = fmt.Sprintf(" A list is written in brackets: did you mean %q?", "["+raw.str+"]")
			}
			r.errorf(raw.rng, "Invalid value for variable", "%s: %q is not a valid %s value.%s", raw.source, raw.str, typeexpr.TypeString(v.Type), hint)
			return cty.DynamicVal, r.diags
		}
		raw.expr = expr
	}
	val, diags := raw.expr.Value(nil)
	if diags.HasErrors() && fromText {
		// A bare word such as abc parses as a reference; HCL's "Variables may not be
		// used here" would not say which variable or what it expects.
		given := strconv.Quote(raw.str)
		if v.Sensitive {
			given = "the value given"
		}
		r.errorf(raw.rng, "Invalid value for variable", "%s: %s is not a valid value for var.%s, which is of type %s.",
			raw.source, given, v.Name, typeexpr.TypeString(v.Type))
		return cty.DynamicVal, r.diags
	}
	if diags.HasErrors() {
		r.errorf(raw.rng, "Invalid value for variable",
			"%s: the value of var.%s must be a constant: %s", raw.source, v.Name, diags[0].Detail)
		return cty.DynamicVal, r.diags
	}
	return val, nil
}

// convertVar converts a value to the variable's type, reporting where the value came from.
func convertVar(v *Variable, defaults *typeexpr.Defaults, val cty.Value, rng *hcl.Range, source string) (cty.Value, hcl.Diagnostics) {
	if !val.IsKnown() {
		return cty.DynamicVal, nil
	}
	if defaults != nil {
		val = defaults.Apply(val)
	}
	out, err := convert.Convert(val, v.Type)
	if err != nil {
		var r report
		r.errorf(rng, "Invalid value for variable",
			"%s for var.%s is not a %s: %s.", source, v.Name, typeexpr.TypeString(v.Type), err)
		return cty.DynamicVal, r.diags
	}
	return out, nil
}

// checkValidation evaluates one validation block against the resolved value; false
// when the value fails it.
func (l *loader) checkValidation(v *Variable, b *hcl.Block, valRange *hcl.Range) bool {
	content, diags := b.Body.Content(validationSchema)
	l.add(diags)
	if diags.HasErrors() || !v.Value.IsWhollyKnown() {
		return true
	}
	cond := content.Attributes["condition"]
	if d := l.names.checkRefs(cond.Expr, scopeVars, l.p.Files); d.HasErrors() {
		l.add(d)
		return true
	}
	for _, t := range cond.Expr.Variables() {
		if attrStep(t, 1) != v.Name {
			r := t.SourceRange()
			l.errorf(&r, "Invalid validation condition", "A validation condition of var.%s may only reference var.%s.", v.Name, v.Name)
			return true
		}
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.Name: v.Value})},
		Functions: functions(l.p.Dir, l.p.read),
	}
	var msg string
	l.add(gohcl.DecodeExpression(content.Attributes["error_message"].Expr, nil, &msg))
	res, diags := cond.Expr.Value(ctx)
	l.add(diags)
	if diags.HasErrors() {
		return true
	}
	if !res.IsKnown() {
		return true // depends on something that failed, already reported
	}
	if res.IsNull() || res.Type() != cty.Bool {
		l.errorf(cond.Expr.Range().Ptr(), "Invalid validation condition", "The condition must be true or false.")
		return true
	}
	if res.False() {
		subject := valRange
		if subject == nil {
			subject = cond.Expr.Range().Ptr()
		}
		l.add(hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail:   fmt.Sprintf("%s\n\n(var.%s, checked by the validation at %s)", msg, v.Name, cond.Range),
			Subject:  subject,
			// The condition with the value it was given, so the message shows it.
			Expression: cond.Expr, EvalContext: ctx,
		}})
		return false
	}
	return true
}

// decodeLocals evaluates the locals in dependency order; a cycle is reported on each of
// its members.
func (l *loader) decodeLocals(blocks []*hcl.Block) {
	l.localValues = map[string]cty.Value{}
	pending := map[string]*hcl.Attribute{}
	for _, b := range blocks {
		attrs, _ := b.Body.JustAttributes() // problems reported by declare
		for n, a := range attrs {
			if _, dup := pending[n]; !dup {
				pending[n] = a
			}
		}
	}
	for n, a := range pending {
		if d := l.names.checkRefs(a.Expr, scopeLocals, l.p.Files); d.HasErrors() {
			l.add(d)
			delete(pending, n)
		}
	}
	for len(pending) > 0 {
		progress := false
		for _, n := range slices.Sorted(maps.Keys(pending)) {
			a := pending[n]
			ready := true
			for _, t := range a.Expr.Variables() {
				if t.RootName() == "local" {
					if _, waiting := pending[attrStep(t, 1)]; waiting {
						ready = false
					}
				}
			}
			if !ready {
				continue
			}
			ctx := evalContext(l.p, l.names, l.localValues)
			v, diags := a.Expr.Value(ctx)
			l.add(diags)
			if diags.HasErrors() {
				v = cty.DynamicVal
			}
			l.localValues[n] = v
			delete(pending, n)
			progress = true
		}
		if !progress {
			for _, n := range slices.Sorted(maps.Keys(pending)) {
				l.errorf(pending[n].NameRange.Ptr(), "Cycle in local values",
					"local.%s is part of, or depends on, a cycle of local values, so it has no value.", n)
			}
			return
		}
	}
}

// ValuesFile returns each variable's value as HCL text (redacted when sensitive), and
// a -var-file that loads the plan with these values, under header, a comment line:
// sensitive variables are left out of it, with a comment saying how to set them.
func ValuesFile(vars []*Variable, header, redacted string) (map[string]string, []byte) {
	values := map[string]string{}
	var b bytes.Buffer
	b.WriteString(header + "\n")
	for _, v := range vars {
		if v.Sensitive {
			values[v.Name] = redacted
			fmt.Fprintf(&b, "# %s is sensitive and not copied: set it with -var or PLANRUN_VAR_%s\n", v.Name, v.Name)
			continue
		}
		text := strings.TrimSpace(string(hclwrite.TokensForValue(v.Value).Bytes()))
		values[v.Name] = text
		fmt.Fprintf(&b, "%s = %s\n", v.Name, text)
	}
	if len(values) == 0 {
		values = nil
	}
	return values, b.Bytes()
}
