package plan

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/load/dataset"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/gocty"
)

// lengthFunctions are uniform(min, max), normal(mean, stddev, min, max) and
// lognormal(mu, sigma, min, max): each returns an object that prompt_tokens and
// max_tokens read as a distribution of request lengths (plan functions rather than
// blocks, so a length stays one attribute whatever its shape).
func lengthFunctions() map[string]function.Function {
	return map[string]function.Function{
		dataset.LengthUniform:   lengthFunc(dataset.LengthUniform, "min", "max"),
		dataset.LengthNormal:    lengthFunc(dataset.LengthNormal, "mean", "stddev", "min", "max"),
		dataset.LengthLognormal: lengthFunc(dataset.LengthLognormal, "mu", "sigma", "min", "max"),
	}
}

func lengthFunc(kind string, params ...string) function.Function {
	ps := make([]function.Parameter, len(params))
	attrs := map[string]cty.Type{"distribution": cty.String}
	for i, p := range params {
		ps[i] = function.Parameter{Name: p, Type: cty.Number}
		attrs[p] = cty.Number
	}
	return function.New(&function.Spec{
		Params: ps,
		Type:   function.StaticReturnType(cty.Object(attrs)),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			obj := map[string]cty.Value{"distribution": cty.StringVal(kind)}
			for i, p := range params {
				obj[p] = args[i]
			}
			return cty.ObjectVal(obj), nil
		},
	})
}

// decodeLength reads prompt_tokens or max_tokens: a number, a distribution function's
// object, or "dataset" (each request's length from its dataset row).

// decodeDrawn reads a number of units, or a distribution function's object drawing one
// (or "dataset" where a dataset row has it).
func (l *loader) decodeDrawn(a *hcl.Attribute, ctx *hcl.EvalContext, dst *dataset.Length, unit string) {
	if a == nil {
		return
	}
	v, ok := l.eval(a.Expr, ctx, scopePlan)
	if !ok {
		return
	}
	var err error
	switch {
	case v.Type() == cty.String && v.AsString() == dataset.LengthDataset:
		*dst = dataset.Length{Kind: dataset.LengthDataset}
	case v.Type().IsObjectType() && v.Type().HasAttribute("distribution"):
		*dst, err = lengthOf(v)
	default:
		var n int
		if l.decode(a, ctx, &n) {
			*dst = dataset.Fixed(n)
		} else {
			return
		}
	}
	if err == nil {
		err = dst.Check()
	}
	if err != nil {
		l.errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name,
			"%s is a number of %s, uniform(min, max), normal(mean, stddev, min, max), lognormal(mu, sigma, min, max) or \"dataset\": %s.", a.Name, unit, err)
	}
}

// lengthOf turns a distribution function's object into a Length.
func lengthOf(v cty.Value) (dataset.Length, error) {
	get := func(name string, dst any) error {
		if !v.Type().HasAttribute(name) {
			return nil
		}
		return gocty.FromCtyValue(v.GetAttr(name), dst)
	}
	l := dataset.Length{Kind: v.GetAttr("distribution").AsString()}
	for name, dst := range map[string]any{"min": &l.Min, "max": &l.Max, "mean": &l.Mean, "stddev": &l.StdDev, "mu": &l.Mu, "sigma": &l.Sigma} {
		if err := get(name, dst); err != nil {
			return l, fmt.Errorf("%s: %v", name, err)
		}
	}
	return l, nil
}
