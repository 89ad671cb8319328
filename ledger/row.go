// Package ledger is planrun's row schema and the files a run keeps: Row with its CSV
// columns and the one table of result fields (which conditions, references and compare
// read), the ledger (results.csv, appended across runs), requests.jsonl's records,
// manifest.json, summary.json with its JSON Schema, atomic writes, the capacity and
// session figures, and the registry of output kinds. It renders nothing: report does.
package ledger

import (
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/planrun/planrun/stats"
)

// Row is one cell × concurrency level: what produced the figures, the figures, and how
// to read them. Float figures are NaN when not measured (written as an empty CSV cell
// and "—" in Markdown); NewRow starts every figure at NaN so nothing reads as a zero.
// Times are in seconds inside the Row; the CSV header names the unit of each column.
type Row struct {
	// Identity.
	Plan         string // plan name
	PlanPath     string
	PlanHash     string
	CellID       string
	Matrix       string
	Model        string // the plan's model name
	ModelID      string // the name the server knows the model by
	Quantization string
	Tool         string // backend "kind.name"
	BackendURL   string // never with credentials: Append strips userinfo and key/token parameters
	Hardware     string
	GPU          string
	Workload     string
	Concurrency  int
	RequestRate  float64 // requests/s of an open-loop run; 0 for closed loop
	Runs         int     // measured repeat runs behind the row
	MaxTokens    int     // requested output length

	// Counts over all measured runs.
	Requests  int
	Succeeded int
	Failed    int
	Failures  map[string]int // failed requests by error class

	// Distributions over every request of every run (seconds; decode rate in tok/s).
	TTFT, TPOT, ITL, E2E, DecodeRate stats.Dist

	// Rates: the median across runs of each run's figure.
	OutputTokS     float64 // Σ output tokens of successful requests / measured window
	RequestsPerSec float64
	WindowSeconds  float64 // median run window
	OutputTokens   int     // total over all runs

	// Client-side phases over all runs (seconds): NewConnections requests opened a
	// connection, with ConnectSetup its set-up time; SendDelay is each request's start
	// stamp to fully written, less set-up. Both are inside TTFT.
	NewConnections          int
	ConnectSetup, SendDelay stats.Dist
	// SendLag is, in open loop and trace replay, how late requests were sent against
	// their schedule (NaN in closed loop).
	SendLag stats.Dist

	TokenSource           string
	TokensPerChunk        float64
	PromptTokensRequested int
	PromptTokensActual    float64 // mean of the server's own count
	EarlyStops            int

	// VRAM from the gpu package, in GB (10⁹ bytes); NaN when there was no telemetry, with
	// VRAMSource saying why ("no GPU telemetry: NVML library not found") or which NVML
	// figure was used.
	VRAMBaselineGB float64
	VRAMPeakGB     float64
	VRAMProcessGB  float64
	VRAMSource     string
	// VRAMEstimateGB is the seed's estimate (weights + KV cache + overhead) for the
	// cell's model and concurrency, when the server gave the model's shape.
	VRAMEstimateGB float64
	// ServerVRAMGB is what the server itself reports: Ollama's /api/ps size_vram (peak).
	ServerVRAMGB float64
	// KVCachePeakPct is vLLM's KV-cache usage peak over the window (/metrics), in %.
	KVCachePeakPct float64
	// PrefixCacheHitPct is vLLM's prefix-cache hit rate over the window (hits / queries,
	// tokens, from /metrics), in %.
	PrefixCacheHitPct float64
	// vLLM's own per-request figures over the window, means of its /metrics histograms
	// (time_to_first_token, request_time_per_output_token, e2e_request_latency): a check
	// of planrun's TTFT, TPOT and E2E from inside the server.
	ServerTTFTMeanS, ServerTPOTMeanMs, ServerE2EMeanS float64
	// ServerHTTPMeanS is the mean time the server's HTTP layer spent on the same
	// requests, arrival to last byte: the engine's E2E plus its front end.
	ServerHTTPMeanS float64
	// EnergyJ is the GPU energy over the level's monitored span (NVML); TokensPerJoule
	// is output tokens per joule of the hardware's power meter, each run over its own
	// window, the median across runs (Energy, energy.go).
	EnergyJ        float64
	TokensPerJoule float64

	// Client self-checks over the measured window: planrun's CPU use (100 = one core)
	// and how late its goroutines were woken (p99), so a reader can tell the client
	// was not the bottleneck.
	ClientCPUPct   float64
	ClientLagP99Ms float64

	// Stability is the seed's verdict on the worst headline figure's spread across runs
	// (Spreads has each), StabilitySpread that spread.
	Stability       string
	StabilitySpread float64 // fraction: 0.12 is 12%
	Spreads

	// Goodput, NaN when the workload has no slo: the median across runs of the
	// requests/s and output tokens/s of the requests that met every limit.
	GoodputReqS float64
	GoodputTokS float64

	// Goal is the verdict of the workload's goal (a condition over the row's figures):
	// GoalMet, GoalMissed, or empty when the workload has none.
	Goal string

	Reference string // name of the matching reference block
	Verdict   string // within / below / above, or per figure ("ttft within; tok/s below")

	Status  string // ok / failed / interrupted
	Notes   string
	Version string // planrun version
	Started time.Time
	Ended   time.Time

	// RunID names the run that produced the row (the same in its run directory's
	// manifest.json and requests.jsonl); Host is the machine planrun ran on.
	RunID string
	Host  string

	// SLOAttainmentPct is the % of requests meeting every limit of the workload's slo,
	// over every request of every run; NaN when the workload has none.
	SLOAttainmentPct float64

	// Batch is where a batch scheduler (Slurm, Kubernetes) ran the row; zero for a row
	// measured here or on a host.
	Batch BatchPlace

	// CI are the intervals of the rates, the attainment and the stability figure (the
	// distributions' are in each Dist's CI).
	CI Intervals

	// Turns and Sessions are a session workload's figures per turn index and per
	// session, over every request of every run; empty for other workloads. The CSV
	// keeps them as JSON (rowlists.go), so rows read back render the same tables.
	Turns    []stats.TurnSummary
	Sessions *stats.SessionSummary
	// SharedPrefixPct is the % of the server-counted prompt tokens that were a prefix
	// an earlier request of the same run already sent (prefix groups, hash blocks).
	SharedPrefixPct float64

	// The load delivered (stats.Delivered, over every measured run): requests in flight
	// over the measured window (time-weighted mean and p99, and the most), the mean over
	// the span where a closed loop had work for every slot, and the paced requests' rate
	// against their schedule's.
	InFlightMean, InFlightP99, InFlightMax, InFlightHeld float64
	RateScheduled, RateDelivered                         float64
	// RampSeconds is how long a closed loop took to fill its slots (the longest over
	// runs), which InFlightHeld leaves out.
	RampSeconds float64
	// InFlightIdle is the mean of a closed loop's slots standing idle over that held span,
	// between one request's body end and its slot's next start: the client's own
	// turnaround, the part of a closed loop's shortfall that is the client's.
	InFlightIdle float64
	// Turnaround is a closed loop's per-request turnaround: each slot's time from one
	// request's body end to its next request's start (stats.Delivered.Turnaround).
	Turnaround stats.Dist
	// Fidelity is the verdict on the load delivered against the load asked, and on how
	// late it was sent (FidelityOK, FidelityShort, FidelityClientBound, FidelityLate;
	// empty when nothing was judged), and
	// FidelityShortfallPct how far below the asked load the delivered one was, in %.
	Fidelity             string
	FidelityShortfallPct float64
	// A reasoning model's figures (stats.Summary's): TTFO, the reasoning span and TPOT
	// over the answer alone, and the split of OutputTokens.
	TTFO, ReasoningSpan, AnswerTPOT stats.Dist
	ReasoningTokens, AnswerTokens   int
	ReasoningTokenSource            string

	// An embeddings workload's rows: the level's inputs per request and input length
	// (0 on other rows), and the figures over its requests: Σ inputs embedded and Σ the
	// server's input tokens, per second of the window (median across runs). Latency is
	// E2E; an embeddings row has no TTFT, TPOT or output tokens.
	Inputs, InputTokensPerInput int
	InputsTotal, InputTokens    int
	InputsPerSec, InputTokS     float64

	// Models are a model mix's figures per model name, in the mix's (name) order,
	// beside the row's own figures, which pool every name; nil without a mix (mix.go).
	Models []ModelFigures

	// Agents is how many load agents sent the level (0: one process, planrun itself);
	// ClockBoundMs is then the error bar, in ms, of every figure that compares their
	// clocks (send lag, arrival order, delivered rate, the window): the largest of
	// their clock bounds, drift included. NaN without agents.
	Agents       int
	ClockBoundMs float64
	// SketchErrorPct is, when some percentiles came from a sketch (more values of a
	// figure than the exact store keeps), the bound on their relative error in %; NaN
	// when every percentile is exact. The notes say which figures.
	SketchErrorPct float64

	// Memory and Served are the seed table's memory without a GPU and what the
	// server really ran on and served (memory.go).
	Memory
	Served

	// Quality is the cell's output drift against its reference (quality.go): the same
	// on every row of the cell.
	Quality Quality
	// Cost is the cost per million output tokens where the plan gives prices (cost.go).
	Cost
	// Agentic are the tool calls' figures and the prefix cache's (agentic.go).
	Agentic
	// AgentLoop are an agent loop's per-task figures (agentloop.go).
	AgentLoop
	// Inside is what happened inside the measured window besides the requests (window.go).
	Inside
	// Energy is what the tokens drew from the hardware's power meter (energy.go).
	Energy
}

// LateBy is the figure a late verdict is judged on, and its name: a paced row's send lag
// p99 ("send lag"), else a closed loop's turnaround p99 ("turnaround"), in seconds; ""
// and NaN when the row has neither.
func (r *Row) LateBy() (string, float64) {
	switch {
	case r.SendLag.N > 0:
		return "send lag", r.SendLag.P99
	case r.Turnaround.N > 0:
		return "turnaround", r.Turnaround.P99
	}
	return "", math.NaN()
}

// Fidelity verdicts of a Row.
const (
	FidelityOK          = "ok"
	FidelityShort       = "short"
	FidelityClientBound = "client-bound"
	// FidelityLate: the load's rate held, but its requests went out late: a paced
	// level's send lag p99, or a closed loop's turnaround p99, above the workload's
	// fidelity_lag_ms. The timing asked (a trace's bursts, an arrival process, slots
	// kept busy) is not the timing the server saw.
	FidelityLate = "late"
)

// Status values of a Row.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// Goal verdicts of a Row.
const (
	GoalMet    = "met"
	GoalMissed = "missed"
)

// NewRow returns a Row whose figures are all NaN (not measured).
func NewRow() Row {
	nan := math.NaN()
	d := stats.NewDist(nil)
	return Row{
		TTFT: d, TPOT: d, ITL: d, E2E: d, DecodeRate: d, ConnectSetup: d, SendDelay: d, SendLag: d, Turnaround: d,
		TTFO: d, ReasoningSpan: d, AnswerTPOT: d,
		OutputTokS: nan, RequestsPerSec: nan, WindowSeconds: nan, TokensPerChunk: nan,
		PromptTokensActual: nan, VRAMBaselineGB: nan, VRAMPeakGB: nan, VRAMProcessGB: nan,
		VRAMEstimateGB: nan, ServerVRAMGB: nan, KVCachePeakPct: nan, PrefixCacheHitPct: nan,
		ServerTTFTMeanS: nan, ServerTPOTMeanMs: nan, ServerE2EMeanS: nan, ServerHTTPMeanS: nan, EnergyJ: nan, TokensPerJoule: nan,
		ClientCPUPct: nan, ClientLagP99Ms: nan,
		StabilitySpread: nan, SLOAttainmentPct: nan, GoodputReqS: nan, GoodputTokS: nan,
		SharedPrefixPct: nan, InFlightMean: nan, InFlightP99: nan, InFlightMax: nan, InFlightHeld: nan, InFlightIdle: nan,
		RateScheduled: nan, RateDelivered: nan, FidelityShortfallPct: nan, RampSeconds: nan,
		InputsPerSec: nan, InputTokS: nan, ClockBoundMs: nan, SketchErrorPct: nan,
		Memory:    newMemory(),
		Cost:      newCost(),
		CI:        newIntervals(),
		Quality:   NewQuality(),
		Agentic:   newAgentic(),
		AgentLoop: newAgentLoop(),
		Spreads:   newSpreads(),
		Inside:    newInside(),
		Energy:    newEnergy(),
	}
}

// SetStats fills the row's figures from the runs of its level: distributions and counts
// over all requests (Pooled), rates as the median across runs, and the stability verdict.
func (r *Row) SetStats(s stats.Runs) {
	p, m := s.Pooled, s.Median
	r.Runs = len(s.PerRun)
	r.Requests, r.Succeeded, r.Failed = p.Requests, p.Succeeded, p.Failed
	r.Failures = nil
	for class, n := range p.Failures {
		if r.Failures == nil {
			r.Failures = map[string]int{}
		}
		r.Failures[string(class)] = n
	}
	r.TTFT, r.TPOT, r.ITL, r.E2E, r.DecodeRate = p.TTFT, p.TPOT, p.ITL, p.E2E, p.DecodeRate
	r.OutputTokS, r.RequestsPerSec, r.WindowSeconds = m.OutputTokS, m.RequestsPerSec, m.WindowSeconds
	r.OutputTokens = p.OutputTokens
	r.NewConnections, r.ConnectSetup, r.SendDelay = p.NewConnections, p.ConnectSetup, p.SendDelay
	r.SendLag = p.SendLag
	r.TokenSource = p.TokenSource
	r.TokensPerChunk = p.TokensPerChunk
	r.PromptTokensRequested = p.PromptTokensRequested
	r.PromptTokensActual = p.PromptTokensActual
	r.EarlyStops = p.EarlyStops
	r.setSpreads(s)
	r.setSteady(s)
	r.SLOAttainmentPct, r.GoodputReqS, r.GoodputTokS = p.SLOAttainment*100, m.GoodputReqS, m.GoodputTokS
	r.Turns, r.Sessions = p.Turns, p.Sessions
	r.SharedPrefixPct = p.SharedPrefixPct
	d := p.Delivered
	r.InFlightMean, r.InFlightP99, r.InFlightHeld, r.InFlightIdle = d.InFlightMean, d.InFlightP99, d.InFlightHeld, d.IdleHeld
	r.InFlightMax = math.NaN()
	if p.Requests > 0 {
		r.InFlightMax = float64(d.InFlightMax)
	}
	r.RateScheduled, r.RateDelivered, r.RampSeconds = d.RateScheduled, d.RateDelivered, d.RampSeconds
	r.Turnaround = d.Turnaround
	r.TTFO, r.ReasoningSpan, r.AnswerTPOT = p.TTFO, p.ReasoningSpan, p.AnswerTPOT
	r.ReasoningTokens, r.AnswerTokens, r.ReasoningTokenSource = p.ReasoningTokens, p.AnswerTokens, p.ReasoningTokenSource
	if p.Inputs > 0 {
		r.InputsTotal, r.InputTokens = p.Inputs, p.InputTokens
		r.InputsPerSec, r.InputTokS = m.InputsPerSec, m.InputTokS
	}
	r.setAgentic(p)
	r.setAgentLoop(p)
	r.setIntervals(s)
}

// secretParam reports whether a query parameter name looks like it carries a credential.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"key", "token", "secret", "password", "passwd", "auth", "signature", "sig"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// SafeURL returns u without userinfo and without query parameters named like a key,
// token, secret, password or signature: results files are shared, keys must not be.
// An unparseable URL is replaced rather than risk copying a secret.
func SafeURL(u string) string {
	if u == "" {
		return ""
	}
	p, err := url.Parse(u)
	if err != nil {
		return "(unparseable URL removed)"
	}
	p.User = nil
	if p.RawQuery != "" {
		q := p.Query()
		for name := range q {
			if secretParam(name) {
				q.Del(name)
			}
		}
		p.RawQuery = q.Encode()
	}
	return p.String()
}

// BatchPlace is where a batch scheduler ran a row: the scheduler's name ("slurm",
// "kubernetes"), its id for the job (Slurm's job id, a Kubernetes Job's namespace/name),
// the node and, for schedulers that run pods, the pod that ran it, and the job's final
// state in the scheduler's own words (COMPLETED, FAILED, COMPLETE, DELETED, ...).
type BatchPlace struct {
	Scheduler, Job, Node, Pod, State string
}
