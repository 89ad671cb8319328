package plan

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/stats"
	"github.com/zclconf/go-cty/cty"
)

// Workload is a `workload "<name>"` block: what is sent, how often, and what is measured.
type Workload struct {
	Name string
	// PromptTokens and MaxTokens are the typical input and output lengths (the fixed
	// length, or a distribution's centre); PromptLength and OutputLength say how each
	// request's own length is drawn.
	PromptTokens int
	MaxTokens    int
	PromptLength dataset.Length
	OutputLength dataset.Length
	// Dataset, when set, supplies the prompts (and lengths "dataset" reads).
	Dataset *Dataset
	// Stream is false for non-streamed requests (stream = false): E2E and token counts
	// come from the whole response, and TTFT and TPOT are unavailable.
	Stream bool
	// Concurrency lists the levels measured; each is its own result row.
	Concurrency []int
	WarmupRuns  int
	RepeatRuns  int
	// Requests per run; 0 means one per concurrency slot.
	Requests    int
	Measure     []string
	Temperature *float64
	Seed        *int64
	// Prompt is the prompt text, or the contents of prompt_file; empty lets the executor
	// build a prompt of PromptTokens tokens.
	Prompt       string
	SharedPrefix bool
	// RequestRates are open-loop arrival rates in requests/s (request_rate, one number or
	// a list); empty means closed loop. Each rate is run at each concurrency level, which
	// then caps the requests in flight.
	RequestRates []float64
	// Arrival is "poisson" (default) or "constant", for an open loop.
	Arrival string
	// ForceMaxTokens asks the server to generate exactly MaxTokens (default true), so TPOT
	// is not skewed by early stops.
	ForceMaxTokens bool
	Timeouts       backends.Timeouts
	// Goal is an optional condition over result.* (like an expect condition). With a
	// goal, apply runs the levels in order and stops after the first one that misses
	// it: the last level that met it is the capacity at that goal.
	Goal hcl.Expression
	// SLO holds each request to per-request limits (zero: no slo block); rows then
	// report attainment and goodput.
	SLO stats.SLO
	// Capacity, when set, searches for the highest level meeting an attainment target.
	Capacity *Capacity
	// Session, when set, makes the workload multi-turn conversations (session block).
	Session *Session
	// Replay, when set, sends the Mooncake dataset's rows at their timestamps.
	Replay    *Replay
	DeclRange hcl.Range
	// Prefix, when set, groups the requests behind shared prefixes (a prefix block).
	Prefix *Prefix
	// Confidence is the confidence of the rows' intervals, a fraction (confidence = 90 |
	// 95 | 99; 0.95 when unset).
	Confidence float64
	// Precision, when set, keeps each measured run sending until the named figures are
	// that precise, or a cap is hit (precision block).
	Precision *Precision
	// FidelityTolerance is how far below the asked load (a fraction) the delivered load
	// may fall before a row's fidelity is short (fidelity_tolerance_pct; default 5%).
	FidelityTolerance float64
	// FidelityLag is how late a paced level's sends (send lag p99), or a closed loop's
	// turnaround between one request's end and its slot's next start (turnaround p99),
	// may be before a row's fidelity is late (fidelity_lag_ms; default 1 ms, see
	// DefaultFidelityLag).
	FidelityLag time.Duration
	// StopWhenSaturated stops a paced level's run early once its requests so far test
	// over-saturated (stop_when_saturated; stats.Saturation's test): its queue grows
	// without bound, and more of the run adds only waiting.
	StopWhenSaturated bool
	// Ramp spreads a closed loop's start over this long (ramp): the slots start evenly
	// over it, and what they send before it is over is not measured, so the slots do not
	// start in one burst. 0: every slot starts at once.
	Ramp time.Duration
	// Reasoning holds the reasoning controls (reasoning_effort, think).
	Reasoning Reasoning
	// Tools are the functions every request offers the model, and tool_choice (tool
	// blocks).
	Tools Tools
	// PrefixCache is what is done to the server's prefix cache before each level:
	// PrefixCacheKeep (nothing), PrefixCacheReset or PrefixCacheBust.
	PrefixCache string
	// Embeddings, when set, makes the workload embeddings requests (embeddings block).
	Embeddings *Embeddings
	// Models, when set, spread the requests over several model names by weight (models
	// attribute), instead of the cell's model_id alone.
	Models []ModelWeight
	// Agents is how many load agents share each level (agents; default 1: this
	// process sends it all). The hardware's agents block says where they run.
	Agents   int
	agentsAt hcl.Range

	goalCtx *hcl.EvalContext
	// streamAt, maxTokensAt and sloAt are where stream, max_tokens and each slo limit are
	// set, for the reasons a figure cannot exist (figures.go).
	streamAt, maxTokensAt hcl.Range
	sloAt                 map[string]hcl.Range
	sloBody               hcl.Range // the slo block's body, where its limits are
	// body is the block's body, where a misspelt argument or block would be.
	body hcl.Range
	// levelExprs are the concurrency and request_rate expressions, for errors about
	// one of their levels.
	levelExprs map[string]hcl.Expression
}

// levelAt is the range of level i of the concurrency or request_rate list (the whole
// expression when it is not a literal list).
func (w *Workload) levelAt(name string, i int) *hcl.Range {
	if e := w.levelExprs[name]; e != nil {
		return elemRange(e, i)
	}
	return w.DeclRange.Ptr()
}

// LoadLevel is one measured load level of a workload: a row of results.
type LoadLevel struct {
	Concurrency int
	// RequestRate is the open-loop arrival rate in requests/s; 0 for a closed loop.
	RequestRate float64
	// Inputs and InputTokens are an embeddings workload's inputs per request and input
	// length; 0 for other workloads.
	Inputs, InputTokens int
}

// String names the level as the terminal and notes do: "c=4", "c=4 rate=2/s", or
// "replay" for a trace replay without a cap on requests in flight (concurrency 0, which
// only a replay has).
func (l LoadLevel) String() string {
	if l.Inputs > 0 {
		s := fmt.Sprintf("c=%d inputs=%d len=%d", l.Concurrency, l.Inputs, l.InputTokens)
		if l.RequestRate > 0 {
			s += fmt.Sprintf(" rate=%g/s", l.RequestRate)
		}
		return s
	}
	switch {
	case l.RequestRate > 0:
		return fmt.Sprintf("c=%d rate=%g/s", l.Concurrency, l.RequestRate)
	case l.Concurrency == 0:
		return "replay"
	}
	return fmt.Sprintf("c=%d", l.Concurrency)
}

// LevelName names a level of this workload as the terminal shows it: LoadLevel.String,
// except that a replay reads "replay" or, capped by concurrency, "replay ≤N in flight",
// never "c=N" as a closed loop would.
func (w *Workload) LevelName(l LoadLevel) string {
	if w.Replay != nil && l.RequestRate == 0 {
		if l.Concurrency > 0 {
			return fmt.Sprintf("replay ≤%d in flight", l.Concurrency)
		}
		return "replay"
	}
	return l.String()
}

// Levels lists the workload's load levels in the order they run: each concurrency
// level, and within it each request rate.
func (w *Workload) Levels() []LoadLevel {
	var out []LoadLevel
	for _, c := range w.Concurrency {
		if e := w.Embeddings; e != nil {
			for _, n := range e.Inputs {
				for _, t := range e.InputTokens {
					out = append(out, LoadLevel{Concurrency: c, Inputs: n, InputTokens: t})
				}
			}
			continue
		}
		if len(w.RequestRates) == 0 {
			out = append(out, LoadLevel{Concurrency: c})
			continue
		}
		for _, r := range w.RequestRates {
			out = append(out, LoadLevel{Concurrency: c, RequestRate: r})
		}
	}
	return out
}

// MeetsGoal evaluates the workload's goal against one result row (keys of
// ResultVariables). Without a goal every level meets it.
func (w *Workload) MeetsGoal(result map[string]cty.Value) (bool, hcl.Diagnostics) {
	if w.Goal == nil {
		return true, nil
	}
	return evalCondition(w.Goal, w.goalCtx, result, fmt.Sprintf("the goal of workload %q", w.Name))
}

// RequestsPerRun is the number of measured requests in one run at a concurrency level.
func (w *Workload) RequestsPerRun(level int) int {
	if w.Session != nil {
		return w.Session.SessionsPerRun(level) * w.Session.Turns
	}
	if w.Requests > 0 {
		return w.Requests
	}
	return level
}

// Workload defaults are the seed config's (examples/seed-config.toml).
const (
	defaultFidelityTolerance = 0.05
	// DefaultFidelityLag is fidelity_lag_ms's default. planrun's own send path, on a quiet
	// 2-core VM, put a replay's send-lag p99 at 0.04–0.35 ms and its arrivals within
	// 0.59 ms of the trace in every run measured (docs/performance.md, set 7): 1 ms is
	// above what a faithful client does there, and below the spacing of the bursts in the
	// traces measured (rows within 2–3 ms), so a request that late still lands in its
	// burst. A fraction of the trace's median gap would be no floor at all: a bursty
	// trace's median gap lies inside its bursts, often 0. See docs/fidelity.md.
	DefaultFidelityLag  = time.Millisecond
	defaultPromptTokens = 128
	defaultMaxTokens    = 256
	defaultWarmupRuns   = 3
	defaultRepeatRuns   = 5
)

// Measures are the metrics a workload can ask for.
var Measures = []string{"ttft", "tpot", "throughput", "vram"}

var arrivals = []string{"poisson", "constant"}

var workloadSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "prompt_tokens"}, {Name: "max_tokens"}, {Name: "concurrency"}, {Name: "warmup_runs"},
		{Name: "repeat_runs"}, {Name: "requests"}, {Name: "measure"}, {Name: "temperature"}, {Name: "seed"},
		{Name: "prompt"}, {Name: "prompt_file"}, {Name: "shared_prefix"}, {Name: "request_rate"},
		{Name: "arrival"}, {Name: "force_max_tokens"}, {Name: "goal"}, {Name: "dataset"}, {Name: "stream"},
		{Name: "fidelity_tolerance_pct"}, {Name: "fidelity_lag_ms"}, {Name: "ramp"},
		{Name: "reasoning_effort"}, {Name: "think"}, {Name: "models"}, {Name: "confidence"}, {Name: "agents"},
		{Name: "tool_choice"}, {Name: "prefix_cache"}, {Name: "stop_when_saturated"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "timeouts"}, {Type: "slo"}, {Type: "capacity"}, {Type: "prefix"}, {Type: "session"}, {Type: "replay"}, {Type: "embeddings"}, {Type: "precision"},
		{Type: "tool", LabelNames: []string{"name"}}},
}

func (w *Workload) object() cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"ref":           cty.StringVal("workload." + w.Name),
		"name":          cty.StringVal(w.Name),
		"prompt_tokens": cty.NumberIntVal(int64(w.PromptTokens)),
		"max_tokens":    cty.NumberIntVal(int64(w.MaxTokens)),
	})
}

func (l *loader) decodeWorkloadBlock(b *hcl.Block, ctx *hcl.EvalContext) *Workload {
	name := b.Labels[0]
	if !validName(name) {
		return nil
	}
	for _, prev := range l.p.Workloads {
		if prev.Name == name {
			return nil
		}
	}
	w := &Workload{
		Name: name, PromptTokens: defaultPromptTokens, MaxTokens: defaultMaxTokens,
		Concurrency: []int{1}, WarmupRuns: defaultWarmupRuns, RepeatRuns: defaultRepeatRuns,
		Measure: append([]string(nil), Measures...), Arrival: "poisson", ForceMaxTokens: true,
		PromptLength: dataset.Fixed(defaultPromptTokens), OutputLength: dataset.Fixed(defaultMaxTokens),
		Stream: true, DeclRange: b.DefRange, FidelityTolerance: defaultFidelityTolerance,
		FidelityLag: DefaultFidelityLag,
	}
	if sb, ok := b.Body.(*hclsyntax.Body); ok {
		w.body = sb.SrcRange
	}
	content, diags := b.Body.Content(workloadSchema)
	l.add(diags)
	before := len(l.diags)
	a := content.Attributes
	w.levelExprs = map[string]hcl.Expression{}
	for _, n := range []string{"concurrency", "request_rate"} {
		if a[n] != nil {
			w.levelExprs[n] = a[n].Expr
		}
	}

	atLeast := func(name string, dst *int, min int) {
		if l.decode(a[name], ctx, dst) && *dst < min {
			l.errorf(a[name].Expr.Range().Ptr(), "Invalid "+name, "%s must be at least %d, not %d.", name, min, *dst)
		}
	}
	l.decodeLengths(w, a, ctx)
	atLeast("warmup_runs", &w.WarmupRuns, 0)
	atLeast("repeat_runs", &w.RepeatRuns, 1)
	atLeast("requests", &w.Requests, 0)

	if levels, ok := l.levelList(a["concurrency"], ctx, "concurrency", "concurrency level"); ok {
		w.Concurrency = levels
	}

	if m := a["measure"]; m != nil && l.decode(m, ctx, &w.Measure) {
		for i, x := range w.Measure {
			if !slices.Contains(Measures, x) {
				l.errorf(elemRange(m.Expr, i), "Unknown measure", "measure lists metrics out of %s; %q is not one.%s", quoteList(Measures), x, suggestion(x, Measures))
			}
		}
	}
	l.decodeRequestContent(w, a, ctx)
	l.decode(a["shared_prefix"], ctx, &w.SharedPrefix)
	l.decodeRequestRates(w, a["request_rate"], ctx)
	if g := a["goal"]; g != nil {
		l.checkCondition(g.Expr, ctx, scopeGoal)
		w.Goal, w.goalCtx = g.Expr, ctx
	}
	l.decodeArrival(w, a, ctx)
	l.decode(a["force_max_tokens"], ctx, &w.ForceMaxTokens)
	if l.decode(a["stream"], ctx, &w.Stream) {
		w.streamAt = a["stream"].Range
	}
	l.decodeFidelityTolerance(w, a["fidelity_tolerance_pct"], ctx)
	l.decodeFidelityLag(w, a["fidelity_lag_ms"], ctx)
	l.decodeConfidence(w, a["confidence"], ctx)
	l.decodeReasoning(w, a, ctx)
	decodeTools(l, w, content.Blocks.OfType("tool"), a, ctx)
	decodePrefixCache(l, w, a, ctx)
	l.decodeModelMix(w, a["models"], ctx)
	l.decodeAgents(w, a["agents"], ctx)
	l.decodeWorkloadBlocks(w, content.Blocks, ctx)
	l.decodeSession(w, content.Blocks, a, ctx)
	l.decodeEmbeddings(w, content.Blocks.OfType("embeddings"), a, ctx)
	l.decodeReplay(w, content.Blocks.OfType("replay"), a, ctx)
	l.decodeStopWhenSaturated(w, a["stop_when_saturated"], ctx)         // after request_rate and replay
	l.decodePrecisionBlocks(w, content.Blocks.OfType("precision"), ctx) // after the session and replay it refuses
	l.decodeRamp(w, a, ctx)
	l.add(checkMeaningful(w, a))
	if hasErrorsSince(l.diags, before) {
		return standIn(l, w)
	}
	l.add(checkBounds(w)) // bounds.go: a warning, on a workload without errors
	return w
}

// decodeRequestContent reads what each request carries besides its lengths: sampling
// (temperature, seed) and the prompt text, inline or from a file.
func (l *loader) decodeRequestContent(w *Workload, a hcl.Attributes, ctx *hcl.EvalContext) {
	if t := a["temperature"]; t != nil {
		var f float64
		if l.decode(t, ctx, &f) {
			if f < 0 {
				l.errorf(t.Expr.Range().Ptr(), "Invalid temperature", "temperature cannot be negative.")
			}
			w.Temperature = &f
		}
	}
	if s := a["seed"]; s != nil {
		var n int64
		if l.decode(s, ctx, &n) {
			w.Seed = &n
		}
	}
	l.decode(a["prompt"], ctx, &w.Prompt)
	if pf := a["prompt_file"]; pf != nil {
		var path string
		if a["prompt"] != nil {
			l.errorf(pf.NameRange.Ptr(), "Conflicting arguments", "Give prompt or prompt_file, not both (prompt is at %s).", a["prompt"].NameRange)
		} else if l.decode(pf, ctx, &path) {
			b, err := os.ReadFile(l.resolvePath(path))
			if err != nil {
				l.errorf(pf.Expr.Range().Ptr(), "Cannot read prompt_file", "%s (relative paths are from the plan's directory).%s", err, pathSuggestion(path, l.p.Dir))
			} else {
				l.p.read(l.resolvePath(path))
			}
			w.Prompt = string(b)
		}
	}
}

// decodeArrival reads an open loop's arrival process; without request_rate it has no loop
// to shape, which is said.
func (l *loader) decodeArrival(w *Workload, a hcl.Attributes, ctx *hcl.EvalContext) {
	if ar := a["arrival"]; ar != nil && l.decode(ar, ctx, &w.Arrival) {
		if !slices.Contains(arrivals, w.Arrival) {
			l.errorf(ar.Expr.Range().Ptr(), "Invalid arrival", "arrival is %s, not %q.%s", quoteList(arrivals), w.Arrival, suggestion(w.Arrival, arrivals))
		} else if a["request_rate"] == nil {
			l.add(hcl.Diagnostics{{
				Severity: hcl.DiagWarning, Summary: "arrival without request_rate",
				Detail:  fmt.Sprintf("arrival = %q shapes an open loop, which needs request_rate; without it the workload runs closed-loop.", w.Arrival),
				Subject: ar.NameRange.Ptr(),
			}})
			premise(l.diags[len(l.diags)-1], hcl.Range{}, "request_rate")
		}
	}
}

// decodeRamp reads a closed loop's start ramp; a paced or session workload has none.
func (l *loader) decodeRamp(w *Workload, a hcl.Attributes, ctx *hcl.EvalContext) {
	r := a["ramp"]
	if r == nil || !l.duration(r, ctx, &w.Ramp) {
		return
	}
	var paced string
	switch {
	case a["request_rate"] != nil:
		paced = "request_rate (at " + a["request_rate"].NameRange.String() + ") sends requests on their schedule"
	case w.Replay != nil:
		paced = "a replay sends each row at its own time"
	case w.Session != nil:
		paced = "sessions start their turns after think times"
	}
	if paced != "" {
		l.errorf(r.NameRange.Ptr(), "ramp without a closed loop", "ramp spreads a closed loop's start; %s.", paced)
	}
}

// decodeFidelityTolerance reads the share the delivered load may fall below the asked.
func (l *loader) decodeFidelityTolerance(w *Workload, ft *hcl.Attribute, ctx *hcl.EvalContext) {
	if ft == nil {
		return
	}
	var pct float64
	if l.decode(ft, ctx, &pct) {
		if pct <= 0 || pct >= 100 {
			l.errorf(ft.Expr.Range().Ptr(), "Invalid fidelity_tolerance_pct",
				"fidelity_tolerance_pct is the %% the delivered load may fall below the asked load, above 0 and below 100, not %g.", pct)
		}
		w.FidelityTolerance = pct / 100
		if pct > 0 && pct < 1 {
			l.add(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Tolerance below 1%",
				Detail:  fmt.Sprintf("fidelity_tolerance_pct is in percent: %g allows %g%% below the asked load. For %g%%, write %g.", pct, pct, pct*100, pct*100),
				Subject: ft.Expr.Range().Ptr()}})
		}
	}
}

// decodeConfidence reads the intervals' confidence: 90, 95 or 99 (percent).
func (l *loader) decodeConfidence(w *Workload, c *hcl.Attribute, ctx *hcl.EvalContext) {
	w.Confidence = stats.DefaultConfidence
	if c == nil {
		return
	}
	var pct float64
	if l.decode(c, ctx, &pct) {
		if err := stats.CheckConfidence(pct / 100); err != nil {
			l.errorf(c.Expr.Range().Ptr(), "Invalid confidence",
				"confidence is the confidence of every interval the rows carry, in percent: 90, 95 (the default) or 99, not %g.", pct)
			return
		}
		w.Confidence = pct / 100
	}
}

// decodeFidelityLag reads how late sends (or a closed loop's turnaround) may be at p99.
func (l *loader) decodeFidelityLag(w *Workload, fl *hcl.Attribute, ctx *hcl.EvalContext) {
	if fl == nil {
		return
	}
	var ms float64
	if l.decode(fl, ctx, &ms) {
		if !(ms > 0) || ms > 3.6e6 {
			l.errorf(fl.Expr.Range().Ptr(), "Invalid fidelity_lag_ms",
				"fidelity_lag_ms is how many milliseconds late a paced request may be sent (p99), or a closed loop's slot may stand between requests, before the row's fidelity is late: above 0 and at most an hour, not %g.", ms)
			return
		}
		w.FidelityLag = time.Duration(ms * float64(time.Millisecond))
	}
}

// decodeLengths reads the dataset a workload names and its input and output lengths,
// which may be drawn from a distribution or taken from that dataset.
func (l *loader) decodeLengths(w *Workload, a hcl.Attributes, ctx *hcl.EvalContext) {
	if d := a["dataset"]; d != nil {
		l.decodeWorkloadDataset(w, d, ctx)
	}
	for _, x := range []struct {
		name string
		dst  *dataset.Length
		typ  *int
	}{{"prompt_tokens", &w.PromptLength, &w.PromptTokens}, {"max_tokens", &w.OutputLength, &w.MaxTokens}} {
		at := a[x.name]
		l.decodeDrawn(at, ctx, x.dst, "tokens")
		if at != nil && x.name == "prompt_tokens" && x.dst.Kind != dataset.LengthFixed && (a["prompt"] != nil || a["prompt_file"] != nil) {
			l.errorf(at.Expr.Range().Ptr(), "Conflicting arguments", "A prompt or prompt_file has its own length: prompt_tokens can only be a number beside it, not %s.", x.dst)
		}
		if at != nil && x.name == "max_tokens" {
			w.maxTokensAt = at.Range
		}
		if x.dst.Kind != dataset.LengthDataset {
			*x.typ = x.dst.Typical() // dataset lengths keep the default as their typical one
		} else if w.Dataset == nil {
			l.errorAbsent("dataset", at.Expr.Range().Ptr(), "Invalid "+x.name, "%s = \"dataset\" takes lengths from the workload's dataset, and this workload names none.", x.name)
		}
	}
}

// decodeWorkloadDataset reads the workload's dataset: a reference to a dataset block.
func (l *loader) decodeWorkloadDataset(w *Workload, d *hcl.Attribute, ctx *hcl.EvalContext) {
	v, ok := l.eval(d.Expr, ctx, scopePlan)
	if !ok {
		return
	}
	name, _ := refName(v, "dataset.")
	for _, ds := range l.p.Datasets {
		if ds.Name == name {
			w.Dataset = ds
		}
	}
	if w.Dataset == nil {
		l.errorf(d.Expr.Range().Ptr(), "Invalid dataset", "dataset names a dataset block, as dataset.<name>.")
	}
}

// checkMeaningful refuses an SLO limit, a goal or a capacity search that no measurement
// of the workload can give meaning to: a capacity search over a replay with one load (an
// uncapped replay sends each trace row at its own time, so there is no load to search),
// and an slo limit or goal on a figure the workload never has (figureNeeds).
func checkMeaningful(w *Workload, a hcl.Attributes) hcl.Diagnostics {
	var rep report
	if c := w.Capacity; c != nil && w.Replay != nil && len(w.Levels()) < 2 {
		load := "an uncapped replay"
		if len(w.Concurrency) == 1 && w.Concurrency[0] > 0 {
			load = fmt.Sprintf("a replay capped at one concurrency (%d)", w.Concurrency[0])
		}
		rep.errorf(c.DeclRange.Ptr(), "Capacity search without loads to search",
			"Workload %q is %s: its trace sets the load, so there is one level and nothing to search. "+
				"List several concurrency caps (concurrency = [4, 8, 16]) to search the highest cap meeting the target, or drop the capacity block and read slo_attainment_pct.", w.Name, load)
		w.Capacity = nil
	}
	rep.add(checkSLOFigures(w))
	rep.add(checkGoalFigures(w))
	rep.add(checkMeasureFigures(w, a["measure"]))
	rep.add(checkLevelsReachable(w, a))
	rep.add(checkAgents(w))
	return rep.diags
}

// checkLevelsReachable refuses a closed-loop level that a run's requests (or a session
// workload's sessions) cannot fill: with requests = 8, a level of 16 never has more
// than 8 in flight, and its row would say 16.
func checkLevelsReachable(w *Workload, a hcl.Attributes) hcl.Diagnostics {
	var rep report
	if len(w.RequestRates) > 0 || w.Replay != nil || len(w.Concurrency) == 0 {
		return rep.diags
	}
	top := slices.Max(w.Concurrency)
	switch {
	case w.Session != nil && w.Session.Sessions > 0 && w.Session.Sessions < top:
		rep.errorf(w.Session.sessionsAt.Ptr(), "Fewer sessions than the concurrency",
			"sessions = %d per run, but concurrency lists %d: at most %d sessions are ever in flight, and the row would say %d. List levels up to %d, or raise sessions.", w.Session.Sessions, top, w.Session.Sessions, top, w.Session.Sessions)
	case w.Session == nil && w.Requests > 0 && w.Requests < top && a["requests"] != nil:
		rep.errorf(a["requests"].Expr.Range().Ptr(), "Fewer requests than the concurrency",
			"requests = %d per run, but concurrency lists %d: a closed loop never has more requests in flight than it sends, and the row would say %d. List levels up to %d, or raise requests.", w.Requests, top, top, w.Requests)
	}
	return rep.diags
}

// checkMeasureFigures refuses a measure the workload never has (ttft on an embeddings
// workload), by the same table the slo and goal are held to.
func checkMeasureFigures(w *Workload, m *hcl.Attribute) hcl.Diagnostics {
	var rep report
	if m == nil {
		return rep.diags
	}
	for i, x := range w.Measure {
		if x != "ttft" && x != "tpot" {
			continue
		}
		if why, _ := w.lacks(x); why != "" {
			rep.errorf(elemRange(m.Expr, i), "Unmeasurable measure", "measure lists %s, which workload %q never has: %s.", x, w.Name, why)
		}
	}
	return rep.diags
}

// decodeWorkloadBlocks decodes the blocks inside a workload once its attributes are
// decoded (the capacity search is checked against them).
func (l *loader) decodeWorkloadBlocks(w *Workload, blocks hcl.Blocks, ctx *hcl.EvalContext) {
	byType := blocks.ByType()
	for _, tb := range byType["timeouts"] {
		l.decodeTimeouts(tb, ctx, &w.Timeouts)
	}
	l.decodeSLOBlocks(w, append(byType["slo"], byType["capacity"]...), ctx)
	l.decodePrefixBlocks(w, byType["prefix"], ctx)
}

// decodeConcurrency sets w.Concurrency from concurrency: one number or a list of levels.

// levelList reads one number or a list of distinct numbers of at least 1 (the levels of
// an axis: concurrency, an embeddings workload's inputs and input_tokens). ok is false
// when a is absent or does not evaluate.
func (l *loader) levelList(a *hcl.Attribute, ctx *hcl.EvalContext, name, what string) ([]int, bool) {
	if a == nil {
		return nil, false
	}
	v, ok := l.eval(a.Expr, ctx, scopePlan)
	if !ok {
		return nil, false
	}
	n0 := len(l.diags)
	var levels []int
	if v.Type() == cty.Number {
		var n int
		if l.decode(a, ctx, &n) {
			levels = []int{n}
		}
	} else {
		l.decode(a, ctx, &levels)
	}
	var out []int
	seen := map[int]bool{}
	for i, n := range levels {
		switch {
		case n < 1:
			l.errorf(elemRange(a.Expr, i), "Invalid "+name, "Each %s must be at least 1, not %d.", what, n)
		case seen[n]:
			l.errorf(elemRange(a.Expr, i), "Duplicate "+what, "The level %d is listed twice.", n)
		default:
			seen[n] = true
			out = append(out, n)
		}
	}
	if len(levels) == 0 && !hasErrorsSince(l.diags, n0) {
		l.errorf(a.Expr.Range().Ptr(), "Invalid "+name, "%s needs at least one level.", name)
	}
	return out, true
}

// decodeRequestRates sets w.RequestRates from request_rate: one rate or a list.
func (l *loader) decodeRequestRates(w *Workload, r *hcl.Attribute, ctx *hcl.EvalContext) {
	if r != nil {
		if v, ok := l.eval(r.Expr, ctx, scopePlan); ok {
			var rates []float64
			if v.Type() == cty.Number {
				var f float64
				if l.decode(r, ctx, &f) && f != 0 {
					rates = []float64{f}
				}
			} else {
				l.decode(r, ctx, &rates)
			}
			seen := map[float64]bool{}
			for i, f := range rates {
				switch {
				case f <= 0:
					l.errorf(elemRange(r.Expr, i), "Invalid request_rate", "request_rate is requests per second, above 0 (leave it out for a closed loop), not %g.", f)
				case seen[f]:
					l.errorf(elemRange(r.Expr, i), "Duplicate request_rate", "The rate %g is listed twice.", f)
				default:
					seen[f] = true
					w.RequestRates = append(w.RequestRates, f)
				}
			}
		}
	}
}
