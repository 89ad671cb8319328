package plan

import (
	"math"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Power is a hardware block's power { } sub-block: the meter whose energy every row
// measured on that hardware divides by its output tokens.
type Power struct {
	// Source is one of PowerSources.
	Source string
	// Command is the program (and its arguments) a command source runs each reading;
	// it prints the power in watts.
	Command []string
	// URL and Query are a prometheus source's: a Prometheus server's base URL and a
	// PromQL query of watts, or an exporter's /metrics URL and a metric name.
	URL, Query string
	// Interval is how often the meter is read (0: the default, power.DefaultInterval;
	// an nvml source is read with the GPU sampler, at its interval).
	Interval time.Duration
	// PricePerKWh is what a kWh costs, in the plan's currency; NaN when not given. It
	// is also the hardware's Price.PerKWh, where the row's cost reads it.
	PricePerKWh float64
	DeclRange   hcl.Range
}

// Power sources a power block may name.
const (
	PowerNVML       = "nvml"
	PowerRAPL       = "rapl"
	PowerCommand    = "command"
	PowerPrometheus = "prometheus"
)

// PowerSources are the meters a power block reads.
var PowerSources = []string{PowerNVML, PowerRAPL, PowerCommand, PowerPrometheus}

// powerArguments are the arguments only one source takes, and that source.
var powerArguments = [][2]string{{"command", PowerCommand}, {"url", PowerPrometheus}, {"query", PowerPrometheus}}

var powerSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "source", Required: true}, {Name: "command"}, {Name: "url"}, {Name: "query"}, {Name: "interval"},
	{Name: "price_per_kwh"}, {Name: "currency"},
}}

// minPowerInterval is the shortest interval a plan may ask (power.MinInterval: a
// command or query each reading).
const minPowerInterval = 10 * time.Millisecond

// decodePowerBlock decodes h's power block. A price_per_kwh joins the hardware's price
// (created with the block's currency when the hardware has none), so a row's cost per
// million tokens adds the energy its tokens drew.
func (l *loader) decodePowerBlock(b *hcl.Block, ctx *hcl.EvalContext, h *Hardware) *Power {
	content, diags := b.Body.Content(powerSchema)
	l.add(diags)
	before := len(l.diags)
	p := &Power{PricePerKWh: math.NaN(), DeclRange: b.DefRange}
	a := content.Attributes
	if l.decode(a["source"], ctx, &p.Source) && !slices.Contains(PowerSources, p.Source) {
		l.errorf(a["source"].Expr.Range().Ptr(), "Invalid power source",
			"source is one of %s, not %q.%s", quoteList(PowerSources), p.Source, suggestion(p.Source, PowerSources))
	}
	for _, arg := range powerArguments {
		name, src := arg[0], arg[1]
		if a[name] != nil && p.Source != "" && p.Source != src && slices.Contains(PowerSources, p.Source) {
			l.errorf(a[name].NameRange.Ptr(), "Unsupported argument", "%s belongs to source = %q; a %s power source does not take it.", name, src, p.Source)
		}
	}
	l.decodePowerSource(b, a, ctx, p)
	if a["interval"] != nil && l.duration(a["interval"], ctx, &p.Interval) && p.Interval < minPowerInterval {
		l.errorf(a["interval"].Expr.Range().Ptr(), "Invalid interval", "interval is how often the meter is read, at least %v; %v would read it faster than a meter updates.", minPowerInterval, p.Interval)
	}
	l.decodePowerPrice(a, ctx, h, p)
	if hasErrorsSince(l.diags, before) {
		return nil
	}
	return p
}

// decodePowerSource reads what p's source needs: a command's program, a Prometheus
// source's url and query.
func (l *loader) decodePowerSource(b *hcl.Block, a hcl.Attributes, ctx *hcl.EvalContext, p *Power) {
	switch p.Source {
	case PowerCommand:
		if a["command"] == nil {
			l.errorf(b.DefRange.Ptr(), "Missing command", "A command power source runs a program that prints watts: command = [\"sh\", \"-c\", \"…\"].")
		} else if l.decode(a["command"], ctx, &p.Command) && (len(p.Command) == 0 || p.Command[0] == "") {
			l.errorf(a["command"].Expr.Range().Ptr(), "Invalid command", "command is a program and its arguments, such as [\"sh\", \"-c\", \"cat /run/plug-watts\"]; it is empty.")
		}
	case PowerPrometheus:
		if a["url"] == nil || a["query"] == nil {
			l.errorf(b.DefRange.Ptr(), "Missing url or query", "A prometheus power source takes url (a Prometheus server, or an exporter's …/metrics) and query (PromQL giving watts, or the exporter's metric name).")
		}
		if l.decode(a["url"], ctx, &p.URL) {
			if _, ok := httpURL(p.URL); !ok {
				l.errorf(a["url"].Expr.Range().Ptr(), "Invalid url", "url is a Prometheus server such as \"http://HOST:9090\" or an exporter's \"http://HOST:9400/metrics\", not %q.%s", p.URL, urlSuggestion(p.URL))
			}
		}
		if l.decode(a["query"], ctx, &p.Query) && p.Query == "" {
			l.errorf(a["query"].Expr.Range().Ptr(), "Invalid query", "query is PromQL giving watts (or an exporter's metric name); it is empty.")
		}
	}
}

// decodePowerPrice reads price_per_kwh and its currency into p and h's price.
func (l *loader) decodePowerPrice(a hcl.Attributes, ctx *hcl.EvalContext, h *Hardware, p *Power) {
	if a["currency"] != nil && a["price_per_kwh"] == nil {
		l.errorf(a["currency"].NameRange.Ptr(), "Missing price_per_kwh", "currency names price_per_kwh's currency; give the price too.")
		return
	}
	if a["price_per_kwh"] == nil {
		return
	}
	var v float64
	if !l.decode(a["price_per_kwh"], ctx, &v) {
		return
	}
	if v < 0 || math.IsInf(v, 0) {
		l.errorf(a["price_per_kwh"].Expr.Range().Ptr(), "Invalid price", "price_per_kwh is a price and cannot be negative or infinite.")
		return
	}
	p.PricePerKWh = v
	pr := h.Price
	if pr == nil {
		pr = &Price{InputPerMTok: math.NaN(), OutputPerMTok: math.NaN(), PerHour: math.NaN(), DeclRange: p.DeclRange}
	}
	if c := a["currency"]; c != nil {
		own, diags := decodeCurrency(c, ctx)
		l.add(diags)
		if diags.HasErrors() {
			return
		}
		if pr.Currency != "" && pr.Currency != own {
			l.errorf(c.Expr.Range().Ptr(), "Mixed currencies", "price_per_kwh is in the hardware price's currency, %q (at %s), not %q.", pr.Currency, pr.currencyRange, own)
			return
		}
		pr.Currency, pr.currencyRange = own, c.Expr.Range()
	}
	if pr.Currency == "" {
		l.errorf(a["price_per_kwh"].NameRange.Ptr(), "Missing currency", "price_per_kwh needs its currency: currency = \"USD\" here, or a price { } block in the hardware block.")
		return
	}
	pr.PerKWh = v
	h.Price = pr
}
