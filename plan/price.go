package plan

import (
	"fmt"
	"math"
	"regexp"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/zclconf/go-cty/cty"
)

// Price is a backend's or a hardware block's `price { }`: a gateway's price list per
// million input and output tokens, or what the hardware costs per hour, in the plan's
// currency. Every row measured through them gets its cost per million output tokens
// (ledger.Cost). A figure not given is NaN.
type Price struct {
	InputPerMTok, OutputPerMTok float64
	PerHour                     float64
	// PerKWh is what a kWh of the hardware's power meter costs (its power block's
	// price_per_kwh); NaN when not given.
	PerKWh        float64
	Currency      string
	DeclRange     hcl.Range
	currencyRange hcl.Range
}

// priceAttributes are what a price block of each owner takes: a gateway sells tokens, a
// machine is rented by the hour.
var priceAttributes = map[string][]string{
	"backend":  {"input_per_mtok", "output_per_mtok"},
	"hardware": {"per_hour"},
}

var priceSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "input_per_mtok"}, {Name: "output_per_mtok"}, {Name: "per_hour"}, {Name: "currency", Required: true},
}}

// currencyCode is a currency as a plan names it: an ISO 4217 code ("USD", "CNY") or
// another short word of letters ("credits").
var currencyCode = regexp.MustCompile(`^[A-Za-z]{1,12}$`)

// decodePriceBlock decodes a price block of a backend or a hardware block (owner).
func decodePriceBlock(b *hcl.Block, ctx *hcl.EvalContext, owner string) (*Price, hcl.Diagnostics) {
	p := &Price{InputPerMTok: math.NaN(), OutputPerMTok: math.NaN(), PerHour: math.NaN(), PerKWh: math.NaN(), DeclRange: b.DefRange}
	content, diags := b.Body.Content(priceSchema)
	allowed := priceAttributes[owner]
	targets := map[string]*float64{"input_per_mtok": &p.InputPerMTok, "output_per_mtok": &p.OutputPerMTok, "per_hour": &p.PerHour}
	given := 0
	for _, name := range []string{"input_per_mtok", "output_per_mtok", "per_hour"} {
		a := content.Attributes[name]
		if a == nil {
			continue
		}
		ok := false
		for _, n := range allowed {
			ok = ok || n == name
		}
		if !ok {
			other := map[string]string{"backend": "a hardware block (what the machine costs)", "hardware": "a backend (a gateway's price list)"}[owner]
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid price",
				Detail:  fmt.Sprintf("A %s's price takes %s; %s belongs in the price of %s.", owner, quoteList(allowed), name, other),
				Subject: a.NameRange.Ptr()})
			continue
		}
		var v float64
		d := gohcl.DecodeExpression(a.Expr, ctx, &v)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if v < 0 || math.IsInf(v, 0) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid price",
				Detail: fmt.Sprintf("%s is a price and cannot be negative or infinite.", name), Subject: a.Expr.Range().Ptr()})
			continue
		}
		*targets[name] = v
		given++
	}
	if a := content.Attributes["currency"]; a != nil {
		c, d := decodeCurrency(a, ctx)
		diags = append(diags, d...)
		if !d.HasErrors() {
			p.Currency, p.currencyRange = c, a.Expr.Range()
		}
	}
	if given == 0 && !diags.HasErrors() {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid price",
			Detail: fmt.Sprintf("A %s's price gives %s.", owner, quoteList(allowed)), Subject: b.DefRange.Ptr()})
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p, diags
}

// decodeCurrency reads a currency attribute: a code such as "USD".
func decodeCurrency(a *hcl.Attribute, ctx *hcl.EvalContext) (string, hcl.Diagnostics) {
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return "", diags
	}
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String || !currencyCode.MatchString(v.AsString()) {
		return "", append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid currency",
			Detail: "currency names the prices' currency, as a code such as \"USD\" or \"CNY\".", Subject: a.Expr.Range().Ptr()})
	}
	return v.AsString(), diags
}

// checkCurrencies holds every price of a plan to one currency: a cell's cost adds its
// backend's and its hardware's, and rows are compared on it.
func checkCurrencies(prices []*Price) hcl.Diagnostics {
	var first *Price
	var diags hcl.Diagnostics
	for _, p := range prices {
		switch {
		case p == nil:
		case first == nil:
			first = p
		case p.Currency != first.Currency:
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Mixed currencies",
				Detail: fmt.Sprintf("A plan's prices share one currency, so its rows' costs add and compare: this one is %q, the one at %s is %q.",
					p.Currency, first.currencyRange, first.Currency),
				Subject: p.currencyRange.Ptr()})
		}
	}
	return diags
}
