package plan

import (
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// PlacementKind is a batch scheduler's sub-block of a hardware block (slurm { },
// kubernetes { }), registered by the scheduler that owns it (placement.Kind, listed in
// apply's one table): plan keeps the block's body, as Terraform keeps a backend's Config
// hcl.Body, and the kind decodes and checks it with the loader's diagnostics
// (BatchDecoder). LoadOptions.Placements lists the kinds a plan may use; a sub-block of
// no listed kind is an unsupported block.
type PlacementKind struct {
	// Name is the sub-block's type, and the Placement of its hardware's cells: "slurm".
	Name string
	// Scheduler and Jobs name the scheduler and its jobs in messages: "Slurm", "Slurm
	// jobs" (a block "runs its cells as Slurm jobs"; "Slurm picks the node").
	Scheduler, Jobs string
	// Decode decodes and checks the block; its mistakes go through b.
	Decode func(b *BatchDecoder) BatchSettings
	// Schemas are the block's body schemas by their path under the block ("" the block's
	// own, "resources" a nested block's): where a name written in the wrong body belongs
	// (structure.go) reads them.
	Schemas map[string]*hcl.BodySchema
	// Object, when set, is the block's settings as a plan's expressions read them under
	// hardware.<Name>; given nil (a hardware block without the sub-block) it is the
	// same object empty, so an expression over it works for every hardware.
	Object func(BatchSettings) cty.Value
}

// BatchSettings are what a kind decoded from its block, of the kind's own type
// (*slurm.Settings, *kube.Settings).
type BatchSettings interface {
	// String says where the cells run, as planrun plan shows it: "Slurm partition gpu".
	String() string
}

// CellChecker is BatchSettings that refuse some cells of their hardware, checked once
// the matrices are expanded (a Kubernetes Job that several cells share cannot hold a
// cell of several agents). One diagnostic a hardware block is reported.
type CellChecker interface {
	CheckCell(c *Cell) *hcl.Diagnostic
}

// Batch is a hardware block's batch scheduler sub-block: its cells run as that
// scheduler's jobs.
type Batch struct {
	// Kind is the sub-block's type: the scheduler's name ("slurm").
	Kind string
	// Body is the block as written; Settings are what its kind decoded from it.
	Body      hcl.Body
	Settings  BatchSettings
	DeclRange hcl.Range
}

// BatchDecoder decodes one scheduler sub-block for its kind with the loader's decoding:
// references checked against what a plan may name, mistakes reported with the file,
// line and snippet.
type BatchDecoder struct {
	l   *loader
	ctx *hcl.EvalContext
	// Block is the sub-block; Hardware the block it is in, decoded but for it (its host
	// and agents block, which a kind may refuse).
	Block    *hcl.Block
	Hardware *Hardware
}

// Content decodes the block's body against schema, reporting unknown attributes and
// blocks (with their did-you-mean).
func (b *BatchDecoder) Content(schema *hcl.BodySchema) *hcl.BodyContent {
	content, diags := b.Block.Body.Content(schema)
	b.l.add(diags)
	return content
}

// Add reports diagnostics of the kind's own decoding (a nested block's Content).
func (b *BatchDecoder) Add(diags hcl.Diagnostics) { b.l.add(diags) }

// Decode evaluates a and converts it into target (a pointer to a string, number, bool,
// list or map), reporting a mistake; false when a is nil or its value is unusable.
func (b *BatchDecoder) Decode(a *hcl.Attribute, target any) bool { return b.l.decode(a, b.ctx, target) }

// Duration decodes a duration as every duration of a plan is ("90s", "10m"), with its
// suggestions.
func (b *BatchDecoder) Duration(a *hcl.Attribute, d *time.Duration) bool {
	return b.l.duration(a, b.ctx, d)
}

// Value evaluates a's expression; false when a is nil or its value is null, unknown or
// a mistake (reported).
func (b *BatchDecoder) Value(a *hcl.Attribute) (cty.Value, bool) {
	if a == nil {
		return cty.NilVal, false
	}
	return b.l.eval(a.Expr, b.ctx, scopePlan)
}

// Path makes a plan-relative path absolute.
func (b *BatchDecoder) Path(p string) string { return b.l.resolvePath(p) }

// Errorf reports a mistake at subject.
func (b *BatchDecoder) Errorf(subject *hcl.Range, summary, format string, args ...any) {
	b.l.errorf(subject, summary, format, args...)
}

// QuoteList quotes options for a message: "a", "b" or "c".
func QuoteList(options []string) string { return quoteList(options) }

// placementKind is the listed kind whose sub-block has this type, or nil.
func (l *loader) placementKind(blockType string) *PlacementKind {
	for i, k := range l.opts.Placements {
		if k.Name == blockType {
			return &l.opts.Placements[i]
		}
	}
	return nil
}

// decodeBatchBlocks decodes a hardware block's scheduler sub-blocks, once the rest of
// it is decoded: the first is where its cells run; a second one, or one beside host,
// conflicts (and is decoded too, so its own mistakes are reported in the same run).
func (l *loader) decodeBatchBlocks(h *Hardware, blocks []*hcl.Block, host *hcl.Attribute, ctx *hcl.EvalContext) {
	var first *hcl.Block
	for _, sb := range blocks {
		kind := l.placementKind(sb.Type)
		switch {
		case first != nil:
			l.errorf(sb.DefRange.Ptr(), "Conflicting placement",
				"A hardware block runs its cells either as %s (the %s block at %s) or as %s (this block), not both.",
				l.placementKind(first.Type).Jobs, first.Type, first.DefRange, kind.Jobs)
		case host != nil:
			l.errorf(sb.DefRange.Ptr(), "Conflicting placement",
				"A hardware block runs its cells either on a host (host = ..., at %s) or as %s (this block), not both: %s picks the node.",
				host.NameRange, kind.Jobs, kind.Scheduler)
		}
		settings := kind.Decode(&BatchDecoder{l: l, ctx: ctx, Block: sb, Hardware: h})
		if first == nil {
			first = sb
			h.Batch = &Batch{Kind: sb.Type, Body: sb.Body, Settings: settings, DeclRange: sb.DefRange}
		}
	}
}

// checkBatchCells asks each cell's scheduler settings whether they take the cell: one
// diagnostic a hardware block.
func checkBatchCells(cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[string]bool{}
	for _, c := range cells {
		h := c.Hardware
		if h == nil || h.Batch == nil || seen[h.Name] {
			continue
		}
		if cc, ok := h.Batch.Settings.(CellChecker); ok {
			if d := cc.CheckCell(c); d != nil {
				seen[h.Name] = true
				diags = append(diags, d)
			}
		}
	}
	return diags
}
