// Package ledgertest holds rows for the tests of the packages that render them. Only tests
// import it.
package ledgertest

import (
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// SampleRow is a fully filled row, the same as ledger's own tests use (which cannot
// import this package): report's and compare's golden outputs are rendered from it.
func SampleRow(cell string, conc int) ledger.Row {
	r := ledger.NewRow()
	r.Plan, r.PlanPath, r.PlanHash = "qwen", "plans/qwen.hcl", "sha256:abc123"
	r.CellID, r.Matrix = cell, "qwen"
	r.Model, r.ModelID, r.Quantization = "qwen2.5-7b", "qwen2.5:7b-instruct-q4_K_M", "q4_K_M"
	r.Tool, r.BackendURL = "ollama.local", "http://127.0.0.1:11434"
	r.Hardware, r.GPU, r.Workload = "rtx4060", "NVIDIA GeForce RTX 4060", "short"
	r.Concurrency, r.Runs, r.MaxTokens = conc, 3, 256
	r.Requests, r.Succeeded, r.Failed = 30, 28, 2
	r.Failures = map[string]int{"timeout": 1, "5xx": 1}
	r.TTFT = stats.Dist{P50: 0.82, P90: 0.9, P99: 0.95, Mean: 0.83, Min: 0.7, Max: 0.96, P95: 0.92, Std: 0.05}
	r.TPOT = stats.Dist{P50: 0.028, P90: 0.03, P99: 0.031, Mean: 0.0285, Min: 0.025, Max: 0.032, P95: 0.0305, Std: 0.002}
	r.ITL = stats.Dist{P50: 0.027, P90: 0.04, P99: 0.05, Mean: 0.03, Min: 0.001, Max: 0.06, P95: 0.045, Std: 0.01}
	r.E2E = stats.Dist{P50: 7.9, P90: 8.1, P99: 8.2, Mean: 7.95, Min: 7.5, Max: 8.25, P95: 8.15, Std: 0.2}
	r.DecodeRate = stats.Dist{P50: 35.7, P90: 38, P99: 39, Mean: 35.5, Min: 31, Max: 40, P95: 38.5, Std: 2}
	r.OutputTokS, r.RequestsPerSec, r.WindowSeconds, r.OutputTokens = 35, 0.125, 80, 7168
	r.TokenSource, r.TokensPerChunk = "server", 1
	r.PromptTokensRequested, r.PromptTokensActual, r.EarlyStops = 128, 131, 0
	r.VRAMBaselineGB, r.VRAMPeakGB, r.VRAMProcessGB, r.VRAMSource = 0.6, 4.5, 3.9, "nvml v2 used (reserved excluded)"
	r.Stability, r.StabilitySpread = "stable", 0.04
	r.Reference, r.Verdict = "rtx4060-7b-q4", "within"
	r.Status, r.Notes, r.Version = ledger.StatusOK, "empty context, short input", "v0.1.0"
	r.Started = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	r.Ended = time.Date(2026, 12, 1, 10, 1, 20, 0, time.UTC)
	return r
}
