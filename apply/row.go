package apply

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/planrun/planrun/apply/fidelity"
	"github.com/planrun/planrun/apply/verdict"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/selfcheck"
	"github.com/planrun/planrun/telemetry/serverstats"
)

// rowContext is what a row says about the run that produced it, beyond the level's own
// measurement: known before the level ran, or looked up after it (the VRAM estimate).
type rowContext struct {
	Plan, PlanPath, PlanHash string
	Version                  string
	RunID, Host              string
	// ModelNote describes the model as the server reported it; empty when unknown.
	ModelNote   string
	Calibration executor.Calibration
	// Estimate is the seed's VRAM estimate for the level; nil when there is none.
	Estimate *gpu.VRAMEstimate
	// Quality is the cell's quality figures (qualityphase); nil without a quality phase.
	Quality *ledger.Quality
}

// rowContext gathers the row's context, including the VRAM estimate for the context
// length the server reported (which reads the model's shape from the server once).
func (a *applier) rowContext(ctx context.Context, cell *plan.Cell, level plan.LoadLevel, cal executor.Calibration, m levelMeasurement) rowContext {
	rc := a.rec.rowContext()
	rc.ModelNote, rc.Calibration = a.modelNote(cell), cal
	rc.Quality = a.quality.Of(cell.ID)
	ctxLen := 0
	for _, sm := range m.Server.Models {
		if backends.SameModel(sm.Name, cell.ModelID) {
			ctxLen = sm.ContextLength
		}
	}
	if est, ok := a.estimate(ctx, cell, kvSequences(cell, level), ctxLen); ok {
		rc.Estimate = &est
	}
	return rc
}

// buildRow turns one level's measurement into its result row: figures, VRAM columns,
// notes, status and goal. It is pure, so everything it needs is in its arguments; the
// plan's references and expectations are held against the row when it is recorded.
func buildRow(cell *plan.Cell, level plan.LoadLevel, m levelMeasurement, rc rowContext) ledger.Row {
	w := cell.Workload
	row := cellRow(cell, level, rc)
	row.SetStats(m.Stats)
	row.Models = m.Models
	if rc.Calibration.Actual > 0 && math.IsNaN(row.PromptTokensActual) {
		row.PromptTokensActual = float64(rc.Calibration.Actual)
	}
	// SetStats' is zero when nothing was measured, and the workload's prompt_tokens
	// unless the requests asked their own lengths (a trace's, a dataset's), which stay.
	if row.PromptTokensRequested == 0 || row.PromptTokensRequested == w.PromptTokens {
		row.PromptTokensRequested = cellRow(cell, level, rc).PromptTokensRequested
	}
	row.SetCost()
	setVRAM(&row, m.GPU)
	row.Started, row.Ended = m.Started, m.Ended
	if rc.Quality != nil {
		row.Quality = *rc.Quality
	}

	var notes []string
	if rc.ModelNote != "" {
		notes = append(notes, rc.ModelNote)
	}
	if rc.Calibration.Note != "" {
		notes = append(notes, rc.Calibration.Note)
	}
	notes = append(notes, serverFigures(cell, &row, m.GPU, m.Server, rc.Estimate)...)
	setVRAMSources(cell, &row, m)
	notes = append(notes, setProcessMemory(cell, &row, m)...)
	setJobMemory(&row, m.Job)
	if m.Monitored {
		setClient(&row, m)
		notes = append(notes, clientWarnings(row, m)...)
		notes = append(notes, setInside(&row, m)...)
		notes = append(notes, setEnergy(cell, &row, m)...)
	}
	notes = append(notes, agentRows(&row, m)...)
	if m.PortNote != "" {
		notes = append(notes, m.PortNote)
	}
	notes = append(notes, sketchNotes(&row, m.Stats.Pooled)...)
	notes = append(notes, phaseWarnings(row)...)
	notes = append(notes, reasoningNotes(cell, row)...)
	notes = append(notes, cacheNotes(w, &row, m.Cache)...)
	if f := judgeFidelity(w, level, &row, m); f.judged {
		row.Fidelity, row.FidelityShortfallPct = f.verdict, f.shortfallPct
		if f.note != "" {
			notes = append(notes, f.note)
		}
	}
	switch {
	case m.Interrupted:
		row.Status = ledger.StatusInterrupted
		notes = append(notes, "interrupted")
	case row.Succeeded == 0:
		row.Status = ledger.StatusFailed
		notes = append(notes, "every request failed"+noteSuffix(m.FirstError))
	default:
		row.Status = ledger.StatusOK
	}
	if note := judgeGoal(w, &row); note != "" {
		notes = append(notes, note)
	}
	if m.PrecisionNote != "" {
		notes = append(notes, m.PrecisionNote)
	}
	notes = append(notes, ledger.IntervalNotes(&row)...)
	row.Notes = strings.Join(notes, "; ")
	return row
}

// cellRow is a row that says what produced it (plan, cell, level, planrun version) and
// has no figures yet: every figure is NaN until a measurement fills it.
func cellRow(cell *plan.Cell, level plan.LoadLevel, rc rowContext) ledger.Row {
	w := cell.Workload
	row := ledger.NewRow()
	row.Plan = rc.Plan
	row.PlanPath, row.PlanHash = rc.PlanPath, rc.PlanHash
	row.CellID, row.Matrix, row.Model, row.ModelID = cell.ID, cell.Matrix, cell.Model, cell.ModelID
	row.Quantization, row.Tool, row.BackendURL = cell.Quantization, cell.Backend.Addr, ledger.SafeURL(cell.Backend.URL)
	if cell.Hardware != nil {
		row.Hardware, row.GPU = cell.Hardware.Name, cell.Hardware.GPU
	}
	setPrices(&row, cell)
	row.Workload, row.Concurrency, row.RequestRate = w.Name, level.Concurrency, level.RequestRate
	row.MaxTokens = w.MaxTokens
	row.PromptTokensRequested = w.PromptTokens
	if level.Inputs > 0 {
		row.Inputs, row.InputTokensPerInput = level.Inputs, level.InputTokens
		row.PromptTokensRequested = level.Inputs * level.InputTokens // a request's inputs together
	}
	row.Version, row.RunID, row.Host = rc.Version, rc.RunID, rc.Host
	return row
}

// unmeasuredRow is the row of a cell that failed before measuring (server not started,
// backend unreachable or unbuildable, model missing): status failed, the reason in its
// notes, no figures, so the cell still shows in every output.
func unmeasuredRow(cell *plan.Cell, level plan.LoadLevel, rc rowContext, reason string, at time.Time) ledger.Row {
	row := cellRow(cell, level, rc)
	row.Status, row.Notes = ledger.StatusFailed, "not measured: "+reason
	row.Started, row.Ended = at, at
	return row
}

// clientWarnings are the self-check's warnings that the client, not the server, may
// have shaped the row's figures: each agent's, named, when agents sent the level.
func clientWarnings(row ledger.Row, m levelMeasurement) []string {
	if m.AgentCount <= 1 {
		return m.Client.Warnings(fidelity.MeanTPOT(row), m.maxSendLag())
	}
	var out []string
	for _, al := range m.Agents {
		if al.Client != nil {
			for _, w := range al.Client.Warnings(fidelity.MeanTPOT(row), 0) {
				out = append(out, fmt.Sprintf("agent %d: %s", al.Index, w))
			}
		}
	}
	// The send lag is the level's, over every agent: said once.
	return append(out, selfcheck.Report{}.Warnings(fidelity.MeanTPOT(row), m.maxSendLag())...)
}

// setClient sets the row's client self-check figures: this process's, or, when agents
// sent the level, the busiest agent's CPU and the worst scheduling lag among them.
func setClient(row *ledger.Row, m levelMeasurement) {
	if m.AgentCount <= 1 {
		row.ClientCPUPct = m.Client.CPUPercent
		row.ClientLagP99Ms = float64(m.Client.LagP99) / 1e6
		return
	}
	for _, al := range m.Agents {
		if c := al.Client; c != nil {
			row.ClientCPUPct = nanMax(row.ClientCPUPct, c.CPUPercent)
			row.ClientLagP99Ms = nanMax(row.ClientLagP99Ms, float64(c.LagP99)/1e6)
		}
	}
}

// nanMax is the larger of a and b, a NaN standing for none.
func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || b > a {
		return b
	}
	return a
}

// sketchNotes labels the row's percentiles taken from a sketch (more values of a
// figure than the exact store keeps, stats.ITLExactGaps): which, and within what
// relative error; the row's column says the largest.
func sketchNotes(row *ledger.Row, p stats.Summary) []string {
	var what []string
	if p.RelativeError > 0 {
		what = append(what, fmt.Sprintf("TTFT, TPOT, E2E and the other per-request percentiles within ±%g%%", p.RelativeError*100))
	}
	if p.ITLRelativeError > 0 {
		what = append(what, fmt.Sprintf("ITL within ±%g%%", p.ITLRelativeError*100))
	}
	if r := p.Delivered.Resolution; r > 0 {
		what = append(what, fmt.Sprintf("the in-flight p99 and most, and the held span's ends, at %s ms resolution (the in-flight mean stays exact)", fidelity.Millis(r)))
	}
	if len(what) == 0 {
		return nil
	}
	if e := math.Max(p.RelativeError, p.ITLRelativeError); e > 0 {
		row.SketchErrorPct = e * 100
	}
	return []string{fmt.Sprintf("sketched: more than %d values of a figure, so its percentiles come from a merged DDSketch or a timeline: %s (counts, means, min and max stay exact)",
		stats.ITLExactGaps, strings.Join(what, "; "))}
}

// sendDelayShare is the share of median TTFT above which the client's own send delay is
// noted: between identical runs at concurrency 500 on 2 cores it moved TTFT p50 by
// 0.4–3.7%, more than the differences people compare.
const sendDelayShare = 0.01

// phaseWarnings note when the client's side of TTFT is a noticeable share of it: its own
// send delay, or cold connections whose set-up landed inside some requests' TTFT, when
// that share is also above the self-check's NoteFloor.
func phaseWarnings(row ledger.Row) []string {
	ttft := row.TTFT.P50
	if math.IsNaN(ttft) || ttft <= 0 {
		return nil
	}
	notable := max(sendDelayShare*ttft, selfcheck.NoteFloor.Seconds())
	var w []string
	if d := row.SendDelay.P50; d > notable {
		w = append(w, fmt.Sprintf("client send delay p50 %s is %.1f%% of TTFT p50: the client's own sending "+
			"(start stamp to request written) inflated TTFT; fewer streams per core shrink it",
			roundSeconds(d), 100*d/ttft))
	}
	if row.NewConnections > 0 && row.ConnectSetup.Max > notable {
		w = append(w, fmt.Sprintf("%d request(s) opened a new connection (set-up up to %s, inside their TTFT)",
			row.NewConnections, roundSeconds(row.ConnectSetup.Max)))
	}
	return w
}

// reasoningNotes say when the workload's reasoning controls did not reach the model: a
// control the backend kind does not send (plan validation warned), or controls sent to a
// server that returned no reasoning (one without a reasoning parser, or a model that does
// not reason), and how reasoning tokens were counted when the server gave no count.
func reasoningNotes(cell *plan.Cell, row ledger.Row) []string {
	var notes []string
	ignored := cell.IgnoredReasoning()
	if len(ignored) > 0 {
		notes = append(notes, strings.Join(ignored, ", ")+" not sent: "+cell.Backend.Kind+" backends do not take it")
	}
	if len(cell.Workload.Reasoning.Controls()) > len(ignored) && row.Succeeded > 0 && row.ReasoningTokens == 0 {
		notes = append(notes, "reasoning controls sent, but the server returned no reasoning (it ignores them, or has no reasoning parser)")
	}
	if row.ReasoningTokenSource == string(backends.TokensChunks) {
		notes = append(notes, "reasoning tokens counted from reasoning chunks (the server gave no reasoning_tokens)")
	}
	return notes
}

func roundSeconds(s float64) time.Duration {
	return selfcheck.Readable(time.Duration(s * float64(time.Second)))
}

// judgeGoal sets the row's goal verdict when the workload has a goal and the level was
// not interrupted, and returns a note saying why a missed goal was missed.
func judgeGoal(w *plan.Workload, row *ledger.Row) string {
	if w.Goal == nil || row.Status == ledger.StatusInterrupted {
		return ""
	}
	row.Goal = ledger.GoalMet
	ok, diags := w.MeetsGoal(ledger.ResultValues(row))
	if ok && !diags.HasErrors() {
		return ""
	}
	row.Goal = ledger.GoalMissed
	if diags.HasErrors() {
		return "goal missed: " + strings.TrimSpace(diags.Error())
	}
	return "goal missed: " + verdict.Describe(w.Goal, ledger.ResultValues(row))
}

// setVRAM fills the row's VRAM columns from the sampler's summary: totals over the GPUs
// the machine has, and the server's own processes where NVML attributes memory.
func setVRAM(row *ledger.Row, g gpu.Summary) {
	if g.Note != "" || len(g.Devices) == 0 {
		row.VRAMSource = g.Note
		if row.VRAMSource == "" {
			row.VRAMSource = "no GPU telemetry"
		}
		return
	}
	var base, proc uint64
	attributed := false
	for _, d := range g.Devices {
		base += d.BaselineUsedBytes
		if d.ProcessAttributed {
			attributed = true
		}
	}
	proc = g.PeakTotalProcessBytes()
	row.VRAMBaselineGB = float64(base) / 1e9
	row.VRAMPeakGB = float64(g.PeakTotalUsedBytes()) / 1e9
	if attributed {
		row.VRAMProcessGB = float64(proc) / 1e9
	}
	row.VRAMSource = g.MemoryAPI
}

// levelMeasurement is what one level measured, as plain values: the executor's runs
// already summarised, and each monitor's summary of the measured window.
type levelMeasurement struct {
	Stats stats.Runs
	// Models are each mix model's figures (modelFigures); nil without a mix.
	Models []ledger.ModelFigures
	// Monitored is false when no measured run started (interrupted during warm-up): then
	// no monitor ran and GPU.Note says so.
	Monitored bool
	GPU       gpu.Summary
	Proc      procmem.Summary // the server's process tree (memory.go)
	Job       jobMemory       // the batch job's, on its node (jobmemory.go)
	Server    serverstats.Report
	// DCGM is the hardware's DCGM exporter over the window; empty when it names none.
	DCGM   serverstats.Report
	Client selfcheck.Report
	// FirstError is the text of the first failed request's error; empty when none failed.
	FirstError string
	// PrecisionNote says how a precision block's runs ended and how precise the row is
	// ("" without one).
	PrecisionNote  string
	Interrupted    bool
	Started, Ended time.Time
	// AgentCount is how many load agents sent the level (0: this process alone);
	// Agents are their parts of it, ClockBound the error bar of the figures that
	// compare their clocks, and AgentFault why an agent ended the level ("" when none
	// did).
	AgentCount int
	Agents     []fleet.AgentLevel
	ClockBound time.Duration
	AgentFault string
	// PortNote says which client ran out of source ports ("" when none did).
	PortNote string
	// Cache is what was done to the server's prefix cache before the level (cache.go).
	Cache cacheOutcome
	// Window is what the window's own monitors saw (window.go).
	Window windowMeasurement
}

// maxSendLag is, in open loop and trace replay, the most any request was sent behind its
// schedule; 0 when no request was paced.
func (m *levelMeasurement) maxSendLag() time.Duration {
	if lag := m.Stats.Pooled.SendLag; lag.N > 0 {
		return time.Duration(math.Round(lag.Max * 1e9))
	}
	return 0
}

// countRow folds a level's row into its cell's status: an interrupted level interrupts
// the cell, and the first failed level fails it with that level's notes.
func countRow(st *ledger.CellStatus, row ledger.Row) {
	switch row.Status {
	case ledger.StatusInterrupted:
		st.Status = ledger.StatusInterrupted
	case ledger.StatusFailed:
		if st.Status == ledger.StatusOK {
			st.Status = ledger.StatusFailed
			st.Notes = row.Notes
		}
	}
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return ": " + n
}

// setPrices gives the row the prices of its backend (per million tokens) and hardware
// (per hour), from which SetCost makes its cost.
func setPrices(row *ledger.Row, cell *plan.Cell) {
	if p := cell.Backend.Price; p != nil {
		row.PriceInputPerMTok, row.PriceOutputPerMTok, row.Currency = p.InputPerMTok, p.OutputPerMTok, p.Currency
	}
	if cell.Hardware != nil && cell.Hardware.Price != nil {
		row.PricePerHour, row.Currency = cell.Hardware.Price.PerHour, cell.Hardware.Price.Currency
	}
}
