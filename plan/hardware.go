package plan

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Hardware is a `hardware "<name>"` block: the machine a cell runs on, as recorded in
// every result row (the seed's environment columns), and where its cells run: this
// machine, servers on Host, or a batch scheduler's jobs (see Placement).
type Hardware struct {
	Name, GPU string
	VRAMGB    float64
	Driver    string
	CUDA      string
	Host      string
	Notes     string
	// Batch is set when the block has a batch scheduler's sub-block (slurm { },
	// kubernetes { }: a PlacementKind's): its cells run as that scheduler's jobs.
	Batch *Batch
	// Telemetry names what the host exposes beyond the servers' own endpoints.
	Telemetry Telemetry
	// Pins restrict the servers planrun starts for the block's cells (hardware_pin.go).
	Pins Pins
	// Agents, when set, says where the load agents of its cells run (agents.go).
	Agents *Agents
	// Price is what the hardware costs per hour (and per kWh); nil when the plan gives
	// none.
	Price *Price
	// Power is the meter of the hardware's energy (power.go); nil without a power block.
	Power *Power
	// kinds are the placement kinds the plan was loaded with, whose objects its own
	// object holds.
	kinds []PlacementKind
}

// Placement says where a hardware block's cells run.
type Placement string

// The placements of a hardware block without a scheduler's sub-block; a block with one
// has the kind's name (PlacementKind.Name).
const (
	// PlaceLocal: on this machine, the behaviour of a block with neither host nor a
	// scheduler's block.
	PlaceLocal Placement = "local"
	// PlaceHost: against servers on Hardware.Host, measured from this machine.
	PlaceHost Placement = "host"
)

// Telemetry is a hardware block's telemetry { ... } sub-block.
type Telemetry struct {
	// DCGM is an NVIDIA DCGM exporter's Prometheus endpoint, e.g. http://HOST:9400/metrics.
	DCGM string
	// Process is a process exporter's metrics URL on the server's host (planrun
	// process-exporter, or ncabatoff/process-exporter), e.g. http://HOST:9256/metrics:
	// the server's memory for a server planrun did not start here.
	Process string
	// ProcessGroup is the exporter's group (groupname) that is the server; empty when
	// the exporter serves one group.
	ProcessGroup string
}

// Placement says where this hardware's cells run: its scheduler's name when it has a
// scheduler's block, host when it names a host, local otherwise.
func (h *Hardware) Placement() Placement {
	switch {
	case h.Batch != nil:
		return Placement(h.Batch.Kind)
	case h.Host != "":
		return PlaceHost
	}
	return PlaceLocal
}

// hardwareSchema is a hardware block's: its own attributes and blocks, and a block of
// each placement kind the plan was loaded with.
func hardwareSchema(kinds []PlacementKind) *hcl.BodySchema {
	s := &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "gpu"}, {Name: "vram_gb"}, {Name: "driver"}, {Name: "cuda"}, {Name: "host"}, {Name: "notes"},
			{Name: "cpus"}, {Name: "gpus"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "telemetry"}, {Type: "agents"}, {Type: "price"}, {Type: "power"}},
	}
	for _, k := range kinds {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: k.Name})
	}
	return s
}

var telemetrySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "dcgm"}, {Name: "process"}, {Name: "process_group"}},
}

func (h *Hardware) object() cty.Value {
	attrs := map[string]cty.Value{
		"ref":       cty.StringVal("hardware." + h.Name),
		"name":      cty.StringVal(h.Name),
		"gpu":       cty.StringVal(h.GPU),
		"vram_gb":   cty.NumberFloatVal(h.VRAMGB),
		"driver":    cty.StringVal(h.Driver),
		"cuda":      cty.StringVal(h.CUDA),
		"host":      cty.StringVal(h.Host),
		"placement": cty.StringVal(string(h.Placement())),
	}
	// A kind's object is there for every hardware (empty without its block), so
	// expressions over matrix.hardware.slurm.partition work for all of them.
	for _, k := range h.kinds {
		if k.Object == nil {
			continue
		}
		var s BatchSettings
		if h.Batch != nil && h.Batch.Kind == k.Name {
			s = h.Batch.Settings
		}
		attrs[k.Name] = k.Object(s)
	}
	return cty.ObjectVal(attrs)
}

func (l *loader) decodeHardwareBlock(b *hcl.Block, ctx *hcl.EvalContext) *Hardware {
	name := b.Labels[0]
	if !validName(name) {
		return nil
	}
	for _, prev := range l.p.Hardware {
		if prev.Name == name {
			return nil
		}
	}
	h := &Hardware{Name: name, kinds: l.opts.Placements}
	content, diags := b.Body.Content(hardwareSchema(l.opts.Placements))
	l.add(diags)
	before := len(l.diags)
	a := content.Attributes
	l.decode(a["gpu"], ctx, &h.GPU)
	if l.decode(a["vram_gb"], ctx, &h.VRAMGB) && h.VRAMGB < 0 {
		l.errorf(a["vram_gb"].Expr.Range().Ptr(), "Invalid vram_gb", "vram_gb is the card's memory in GB and cannot be negative.")
	}
	l.decode(a["driver"], ctx, &h.Driver)
	l.decode(a["cuda"], ctx, &h.CUDA)
	if l.decode(a["host"], ctx, &h.Host) {
		if why := hostProblem(h.Host); why != "" {
			l.errorf(a["host"].Expr.Range().Ptr(), "Invalid host", "%s", why)
		}
	}
	l.decode(a["notes"], ctx, &h.Notes)
	l.decodeHardwarePins(a, ctx, h)
	seen := map[string]*hcl.Block{}
	var batch []*hcl.Block
	var power *hcl.Block
	for _, sb := range content.Blocks {
		if first := seen[sb.Type]; first != nil {
			l.errorf(sb.DefRange.Ptr(), "Duplicate "+sb.Type+" block", "A hardware block has at most one %s block; the first is at %s.", sb.Type, first.DefRange)
			continue
		}
		seen[sb.Type] = sb
		switch sb.Type {
		case "agents":
			h.Agents = l.decodeAgentsBlock(sb, ctx)
		case "price":
			pr, diags := decodePriceBlock(sb, ctx, "hardware")
			l.add(diags)
			h.Price = pr
		case "telemetry":
			l.decodeTelemetryBlock(sb, ctx, &h.Telemetry)
		case "power":
			power = sb
		default:
			batch = append(batch, sb)
		}
	}
	if power != nil { // after the price block, whose currency a price_per_kwh shares
		h.Power = l.decodePowerBlock(power, ctx, h)
	}
	// After the agents block, which a scheduler's block may refuse.
	l.decodeBatchBlocks(h, batch, a["host"], ctx)
	if hasErrorsSince(l.diags, before) {
		return standIn(l, h)
	}
	return h
}

func (l *loader) decodeTelemetryBlock(b *hcl.Block, ctx *hcl.EvalContext, t *Telemetry) {
	content, diags := b.Body.Content(telemetrySchema)
	l.add(diags)
	if a := content.Attributes["dcgm"]; a != nil && l.decode(a, ctx, &t.DCGM) {
		if _, ok := httpURL(t.DCGM); !ok {
			l.errorf(a.Expr.Range().Ptr(), "Invalid dcgm URL", "dcgm is a DCGM exporter's metrics URL such as \"http://HOST:9400/metrics\", not %q.%s", t.DCGM, urlSuggestion(t.DCGM))
		}
	}
	if a := content.Attributes["process"]; a != nil && l.decode(a, ctx, &t.Process) {
		if _, ok := httpURL(t.Process); !ok {
			l.errorf(a.Expr.Range().Ptr(), "Invalid process URL", "process is a process exporter's metrics URL such as \"http://HOST:9256/metrics\" (planrun process-exporter on the server's host), not %q.%s", t.Process, urlSuggestion(t.Process))
		}
	}
	if a := content.Attributes["process_group"]; a != nil && l.decode(a, ctx, &t.ProcessGroup) && content.Attributes["process"] == nil {
		l.errorf(a.NameRange.Ptr(), "Missing process URL", "process_group names a group of a process exporter; give the exporter too: process = \"http://HOST:9256/metrics\".")
	}
}
