// Package cellsettings is a cell's settings as the plan resolved them, by the plan's
// own attribute names, for the manifest: two runs of a cell can then be told apart by
// what each asked for, not only by the plan's text.
package cellsettings

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/plan"
)

// Of is the cell's settings as the plan resolved them, by the plan's own
// attribute names (backend ones under "backend."), for the manifest: two runs of a cell
// can then be told apart by what each asked for, not only by the plan's text. Unset
// settings are left out; header values and keys never appear, only their names.
func Of(c *plan.Cell) map[string]string {
	s := settings{}
	s.set("model", c.Model)
	s.set("model_id", c.ModelID)
	s.set("quantization", c.Quantization)
	if c.Hardware != nil {
		s.set("hardware", c.Hardware.Name)
	}
	if c.Server != nil {
		s.set("server", c.Server.Name)
	}
	s.backend(c.Backend)
	s.workload(c.Workload)
	return s
}

type settings map[string]string

func (s settings) set(k, v string) {
	if v != "" {
		s[k] = v
	}
}

func (s settings) setInt(k string, v int) {
	if v != 0 {
		s[k] = strconv.Itoa(v)
	}
}

func (s settings) setFloat(k string, v float64) {
	if v != 0 {
		s[k] = strconv.FormatFloat(v, 'g', -1, 64)
	}
}

func (s settings) setDuration(k string, d time.Duration) {
	if d != 0 {
		s[k] = d.String()
	}
}

func (s settings) timeouts(prefix string, t backends.Timeouts) {
	s.setDuration(prefix+"connect", t.Connect)
	s.setDuration(prefix+"first_token", t.FirstToken)
	s.setDuration(prefix+"idle", t.Idle)
	s.setDuration(prefix+"total", t.Total)
}

func (s settings) backend(b *plan.Backend) {
	s.set("tool", b.Addr)
	s.set("backend.url", ledger.SafeURL(b.URL))
	s.set("backend.api", b.API)
	s.set("backend.api_key_env", b.APIKeyEnv)
	s.set("backend.headers", strings.Join(slices.Sorted(maps.Keys(b.Headers)), ","))
	for _, k := range slices.Sorted(maps.Keys(b.ExtraFields)) {
		v, _ := json.Marshal(b.ExtraFields[k])
		s.set("backend.extra_fields."+k, string(v))
	}
	if b.EngineExtensions {
		s.set("backend.engine_extensions", "true")
	}
	s.set("backend.keep_alive", b.KeepAlive)
	s.set("backend.ensure_model", b.EnsureModel)
	s.timeouts("backend.timeout.", b.Timeouts)
}

func (s settings) workload(w *plan.Workload) {
	s.set("workload", w.Name)
	s.setInt("prompt_tokens", w.PromptTokens)
	s.setInt("max_tokens", w.MaxTokens)
	if w.PromptLength.Kind != dataset.LengthFixed {
		s.set("prompt_length", w.PromptLength.String())
	}
	if w.OutputLength.Kind != dataset.LengthFixed {
		s.set("output_length", w.OutputLength.String())
	}
	if w.Dataset != nil {
		s.set("dataset", w.Dataset.Name)
	}
	s.set("stream", strconv.FormatBool(w.Stream))
	s.set("force_max_tokens", strconv.FormatBool(w.ForceMaxTokens))
	s.set("concurrency", mdtable.JoinInts(w.Concurrency))
	s.set("warmup_runs", strconv.Itoa(w.WarmupRuns))
	s.set("repeat_runs", strconv.Itoa(w.RepeatRuns))
	s.setInt("requests", w.Requests)
	if w.Agents > 1 { // the default, one process, is left out: runs before agents read the same
		s.setInt("agents", w.Agents)
	}
	s.set("measure", strings.Join(w.Measure, ","))
	if w.Temperature != nil {
		s.set("temperature", strconv.FormatFloat(*w.Temperature, 'g', -1, 64))
	}
	if w.Seed != nil {
		s.set("seed", strconv.FormatInt(*w.Seed, 10))
	}
	if w.Prompt != "" {
		s.set("prompt", strconv.Itoa(len(w.Prompt))+" bytes")
	}
	if w.SharedPrefix {
		s.set("shared_prefix", "true")
	}
	if len(w.RequestRates) > 0 {
		rates := make([]string, len(w.RequestRates))
		for i, r := range w.RequestRates {
			rates[i] = strconv.FormatFloat(r, 'g', -1, 64)
		}
		s.set("request_rate", strings.Join(rates, ","))
		s.set("arrival", w.Arrival)
	}
	s.setFloat("fidelity_tolerance_pct", w.FidelityTolerance*100)
	if w.FidelityLag != plan.DefaultFidelityLag {
		// Only when set: runs from before the limit existed judged no lateness, and a key
		// on every cell would show on each one's history as a setting changed.
		s.setFloat("fidelity_lag_ms", float64(w.FidelityLag)/float64(time.Millisecond))
	}
	s.timeouts("timeout.", w.Timeouts)
	s.set("reasoning_effort", w.Reasoning.Effort)
	if w.Reasoning.Think != nil {
		s.set("think", strconv.FormatBool(*w.Reasoning.Think))
	}
	for _, m := range w.Models {
		s.setFloat("models."+m.Name, m.Weight)
	}
	for _, t := range w.Tools.Tools {
		schema, _ := json.Marshal(t.Parameters)
		s.set("tool."+t.Name, string(schema))
	}
	s.set("tool_choice", w.Tools.Choice)
	s.blocks(w)
}

// blocks are the workload's sub-blocks, one setting per attribute.
func (s settings) blocks(w *plan.Workload) {
	s.setDuration("slo.ttft", w.SLO.TTFT)
	s.setDuration("slo.tpot", w.SLO.TPOT)
	s.setDuration("slo.itl", w.SLO.ITL)
	s.setDuration("slo.e2e", w.SLO.E2E)
	if c := w.Capacity; c != nil {
		s.setFloat("capacity.target_pct", c.TargetPct)
		s.setFloat("capacity.resolution", c.Resolution)
	}
	if x := w.Session; x != nil {
		s.setInt("session.turns", x.Turns)
		s.setDuration("session.think_time", x.ThinkTime)
		s.setInt("session.sessions", x.Sessions)
		if a := x.Agent; a != nil {
			s.setInt("session.agent.max_steps", a.MaxSteps)
			s.set("session.agent.tool_latency_ms", a.ToolLatencyMs.String())
			s.set("session.agent.result_tokens", a.ResultTokens.String())
			s.setInt("session.agent.results", len(a.Results))
		}
	}
	if x := w.Prefix; x != nil {
		s.setInt("prefix.tokens", x.Tokens)
		s.setInt("prefix.groups", x.Groups)
	}
	if x := w.Replay; x != nil {
		s.setFloat("replay.speedup", x.Speedup)
		s.setDuration("replay.start", x.Start)
		s.setDuration("replay.duration", x.Duration)
	}
	if x := w.Embeddings; x != nil {
		s.set("embeddings.inputs", mdtable.JoinInts(x.Inputs))
		s.set("embeddings.input_tokens", mdtable.JoinInts(x.InputTokens))
	}
}
