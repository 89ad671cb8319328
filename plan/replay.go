package plan

import (
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/load/dataset"
)

// Replay is a workload's `replay` block: its Mooncake dataset is sent as recorded, each
// row at its own timestamp (open loop) with its own input and output length.
type Replay struct {
	// Speedup divides trace time: 2 sends the trace in half its recorded time.
	Speedup float64
	// Start and Duration are the window of trace time replayed; Duration 0 runs to the
	// trace's end. A row is sent at (timestamp − Start) / Speedup after the run starts.
	Start, Duration time.Duration
	DeclRange       hcl.Range
}

var replaySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "speedup"}, {Name: "start"}, {Name: "duration"}},
}

// decodeReplay reads a workload's replay block, if it has one, and sets the defaults
// that suit a replay where the plan left them out: no cap on requests in flight, no
// warm-up, one measured replay. a is the workload's attributes.
func (l *loader) decodeReplay(w *Workload, blocks hcl.Blocks, a hcl.Attributes, ctx *hcl.EvalContext) {
	if len(blocks) == 0 {
		return
	}
	b := blocks[0]
	for _, dup := range blocks[1:] {
		l.errorf(dup.DefRange.Ptr(), "Duplicate replay block", "A workload replays one trace window; the first replay block is at %s.", b.DefRange)
	}
	r := &Replay{Speedup: 1, DeclRange: b.DefRange}
	content, diags := b.Body.Content(replaySchema)
	l.add(diags)
	if s := content.Attributes["speedup"]; l.decode(s, ctx, &r.Speedup) && r.Speedup <= 0 {
		l.errorf(s.Expr.Range().Ptr(), "Invalid speedup", "speedup divides the trace's time and must be above 0, not %g.", r.Speedup)
	}
	if s := content.Attributes["start"]; s != nil {
		l.duration(s, ctx, &r.Start)
	}
	if d := content.Attributes["duration"]; d != nil && l.duration(d, ctx, &r.Duration) && r.Duration == 0 {
		l.errorf(d.Expr.Range().Ptr(), "Empty replay window", "duration is the length of trace time replayed: leave it out to replay to the trace's end, or give more than 0.")
	}
	w.Replay = r
	// A dataset that failed to decode, or a reference to none, has its own diagnostic.
	null := nullArg(a["dataset"], ctx, "a replay sends the rows of the Mooncake trace it names")
	l.add(null)
	nullTrace := len(null) > 0
	switch ds := w.Dataset; {
	case !nullTrace && a["dataset"] == nil:
		l.errorAbsent("dataset", b.DefRange.Ptr(), "Replay needs a trace", "replay sends a Mooncake trace's rows at their timestamps: set the workload's dataset to a dataset block with format = %q.", dataset.FormatMooncake)
	case ds != nil && !l.p.failed[ds] && ds.Spec.Format != dataset.FormatMooncake:
		// The dataset named is the mistake, not the replay block beside it.
		l.errorf(a["dataset"].Expr.Range().Ptr(), "Replay needs a trace", "The replay block (at %s) sends a Mooncake trace's rows at their timestamps, but dataset %q has format = %q: name a dataset block with format = %q.",
			b.DefRange, ds.Name, ds.Spec.Format, dataset.FormatMooncake)
	}
	if w.Session != nil {
		l.errorf(b.DefRange.Ptr(), "Conflicting blocks", "A replay block cannot go with a session block (at %s): a trace's rows are independent requests, not turns of a conversation.", w.Session.DeclRange)
	}
	if w.Prefix != nil {
		l.errorf(b.DefRange.Ptr(), "Conflicting blocks", "A replay block cannot go with a prefix block (at %s): a trace's rows share prefixes through their hash_ids (block_size on the dataset).", w.Prefix.DeclRange)
	}
	for _, name := range []string{"request_rate", "prompt", "prompt_file", "shared_prefix"} {
		if at := a[name]; at != nil {
			l.errorf(at.NameRange.Ptr(), "Conflicting arguments", "A replay sends each trace row at its own time with its own lengths: %s cannot be set beside it.", name)
		}
	}
	for _, x := range []struct {
		name string
		len  dataset.Length
	}{{"prompt_tokens", w.PromptLength}, {"max_tokens", w.OutputLength}} {
		if at := a[x.name]; at != nil && x.len.Kind != dataset.LengthDataset {
			l.errorf(at.Expr.Range().Ptr(), "Conflicting arguments", "A replay takes each request's %s from its trace row: leave it out or set it to \"dataset\".", x.name)
		}
	}
	w.PromptLength, w.OutputLength = dataset.Length{Kind: dataset.LengthDataset}, dataset.Length{Kind: dataset.LengthDataset}
	if a["concurrency"] == nil {
		w.Concurrency = []int{0}
	}
	if a["warmup_runs"] == nil {
		w.WarmupRuns = 0
	}
	if a["repeat_runs"] == nil {
		w.RepeatRuns = 1
	}
}
