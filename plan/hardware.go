package plan

import (
	"regexp"
	"slices"

	"github.com/planrun/planrun/placement/slurm"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Hardware is a `hardware "<name>"` block: the machine a cell runs on, as recorded in
// every result row (the seed's environment columns), and where its cells run: this
// machine, servers on Host, or Slurm batch jobs (see Placement).
type Hardware struct {
	Name, GPU string
	VRAMGB    float64
	Driver    string
	CUDA      string
	Host      string
	Notes     string
	// Slurm is set when the block has a slurm sub-block: its cells run as batch jobs.
	Slurm *Slurm
	// Kubernetes is set when the block has a kubernetes sub-block: its cells run as
	// Kubernetes Jobs.
	Kubernetes *Kubernetes
	// Telemetry names what the host exposes beyond the servers' own endpoints.
	Telemetry Telemetry
	// Pins restrict the servers planrun starts for the block's cells (hardware_pin.go).
	Pins Pins
	// Agents, when set, says where the load agents of its cells run (agents.go).
	Agents *Agents
	// Price is what the hardware costs per hour; nil when the plan gives none.
	Price *Price
}

// Placement says where a hardware block's cells run.
type Placement string

const (
	// PlaceLocal: on this machine, the behaviour of a block with neither host nor slurm.
	PlaceLocal Placement = "local"
	// PlaceHost: against servers on Hardware.Host, measured from this machine.
	PlaceHost Placement = "host"
	// PlaceSlurm: as Slurm batch jobs that run planrun on the allocated node.
	PlaceSlurm Placement = "slurm"
)

// Slurm is a hardware block's slurm { ... } sub-block: the settings package slurm submits
// with, and where the block was declared.
type Slurm struct {
	slurm.Settings
	DeclRange hcl.Range
}

var jobsModes = []string{slurm.JobsPerHardware, slurm.JobsPerCell}

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

// Placement says where this hardware's cells run: slurm or kubernetes when it has such a
// block, host when it names a host, local otherwise.
func (h *Hardware) Placement() Placement {
	switch {
	case h.Slurm != nil:
		return PlaceSlurm
	case h.Kubernetes != nil:
		return PlaceKubernetes
	case h.Host != "":
		return PlaceHost
	}
	return PlaceLocal
}

// SlurmCells lists cells as package slurm groups them into jobs: a cell whose hardware is
// not placed on Slurm goes with no settings.
func SlurmCells(cells []*Cell) []slurm.Cell {
	out := make([]slurm.Cell, len(cells))
	for i, c := range cells {
		out[i].ID, out[i].Agents = c.ID, c.Workload.Agents
		if h := c.Hardware; h != nil {
			out[i].Hardware = h.Name
			if h.Slurm != nil {
				out[i].Settings = &h.Slurm.Settings
			}
		}
	}
	return out
}

var hardwareSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "gpu"}, {Name: "vram_gb"}, {Name: "driver"}, {Name: "cuda"}, {Name: "host"}, {Name: "notes"},
		{Name: "cpus"}, {Name: "gpus"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "slurm"}, {Type: "kubernetes"}, {Type: "telemetry"}, {Type: "agents"}, {Type: "price"}},
}

var slurmSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "partition"}, {Name: "gpus"}, {Name: "gres"}, {Name: "constraint"}, {Name: "account"},
		{Name: "qos"}, {Name: "time"}, {Name: "sbatch_args"}, {Name: "jobs"}, {Name: "planrun_path"},
	},
}

var telemetrySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "dcgm"}, {Name: "process"}, {Name: "process_group"}},
}

// slurmTime is sbatch's --time syntax: minutes, [days-]hours:minutes[:seconds], or
// minutes:seconds; "UNLIMITED"/"INFINITE" leave the partition's limit.
var slurmTime = regexp.MustCompile(`^(\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+(:\d+(:\d+)?)?|UNLIMITED|INFINITE)$`)

func (h *Hardware) object() cty.Value {
	s := h.Slurm
	if s == nil {
		s = &Slurm{}
	}
	return cty.ObjectVal(map[string]cty.Value{
		"ref":       cty.StringVal("hardware." + h.Name),
		"name":      cty.StringVal(h.Name),
		"gpu":       cty.StringVal(h.GPU),
		"vram_gb":   cty.NumberFloatVal(h.VRAMGB),
		"driver":    cty.StringVal(h.Driver),
		"cuda":      cty.StringVal(h.CUDA),
		"host":      cty.StringVal(h.Host),
		"placement": cty.StringVal(string(h.Placement())),
		// Always an object, so expressions over matrix.hardware.slurm.partition work for
		// every hardware (empty when the block has no slurm block).
		"slurm": cty.ObjectVal(map[string]cty.Value{
			"partition": cty.StringVal(s.Partition),
			"account":   cty.StringVal(s.Account),
			"qos":       cty.StringVal(s.QOS),
		}),
	})
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
	h := &Hardware{Name: name}
	content, diags := b.Body.Content(hardwareSchema)
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
	for _, sb := range content.Blocks {
		if first := seen[sb.Type]; first != nil {
			l.errorf(sb.DefRange.Ptr(), "Duplicate "+sb.Type+" block", "A hardware block has at most one %s block; the first is at %s.", sb.Type, first.DefRange)
			continue
		}
		seen[sb.Type] = sb
		switch sb.Type {
		case "slurm":
			h.Slurm = l.decodeSlurmBlock(sb, ctx)
		case "agents":
			h.Agents = l.decodeAgentsBlock(sb, ctx)
		case "kubernetes":
			h.Kubernetes = l.decodeKubernetesBlock(sb, ctx)
		case "price":
			pr, diags := decodePriceBlock(sb, ctx, "hardware")
			l.add(diags)
			h.Price = pr
		default:
			l.decodeTelemetryBlock(sb, ctx, &h.Telemetry)
		}
	}
	l.add(checkAgentsPlacement(h))
	if sb := seen["slurm"]; sb != nil && a["host"] != nil {
		l.errorf(sb.DefRange.Ptr(), "Conflicting placement",
			"A hardware block runs its cells either on a host (host = ..., at %s) or as Slurm jobs (this block), not both: Slurm picks the node.", a["host"].NameRange)
	}
	if kb := seen["kubernetes"]; kb != nil {
		switch {
		case seen["slurm"] != nil:
			l.errorf(kb.DefRange.Ptr(), "Conflicting placement",
				"A hardware block runs its cells either as Slurm jobs (the slurm block at %s) or as Kubernetes Jobs (this block), not both.", seen["slurm"].DefRange)
		case a["host"] != nil:
			l.errorf(kb.DefRange.Ptr(), "Conflicting placement",
				"A hardware block runs its cells either on a host (host = ..., at %s) or as Kubernetes Jobs (this block), not both: Kubernetes picks the node.", a["host"].NameRange)
		}
	}
	if hasErrorsSince(l.diags, before) {
		return standIn(l, h)
	}
	return h
}

func (l *loader) decodeSlurmBlock(b *hcl.Block, ctx *hcl.EvalContext) *Slurm {
	s := &Slurm{Settings: slurm.Settings{Jobs: slurm.JobsPerHardware}, DeclRange: b.DefRange}
	content, diags := b.Body.Content(slurmSchema)
	l.add(diags)
	a := content.Attributes
	l.decode(a["partition"], ctx, &s.Partition)
	l.decode(a["gpus"], ctx, &s.GPUs)
	l.decode(a["gres"], ctx, &s.GRES)
	l.decode(a["constraint"], ctx, &s.Constraint)
	l.decode(a["account"], ctx, &s.Account)
	l.decode(a["qos"], ctx, &s.QOS)
	l.decode(a["planrun_path"], ctx, &s.PlanrunPath)
	if a["gpus"] != nil && a["gres"] != nil {
		l.errorf(a["gres"].NameRange.Ptr(), "Conflicting arguments",
			"gpus (at %s) and gres both request GPUs; give one: gpus = \"2\" or gres = \"gpu:2\".", a["gpus"].NameRange)
	}
	if l.decode(a["time"], ctx, &s.Time) && !slurmTime.MatchString(s.Time) {
		l.errorf(a["time"].Expr.Range().Ptr(), "Invalid time",
			"time is sbatch's time limit: minutes (\"30\"), \"HH:MM:SS\" or \"D-HH:MM:SS\", not %q.", s.Time)
	}
	l.decode(a["sbatch_args"], ctx, &s.SbatchArgs)
	if l.decode(a["jobs"], ctx, &s.Jobs) && !slices.Contains(jobsModes, s.Jobs) {
		l.errorf(a["jobs"].Expr.Range().Ptr(), "Invalid jobs",
			"jobs is %q (one batch job runs all this hardware's cells, in plan order) or %q (one job per cell), not %q.%s",
			slurm.JobsPerHardware, slurm.JobsPerCell, s.Jobs, suggestion(s.Jobs, jobsModes))
	}
	return s
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
