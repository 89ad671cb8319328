package apply

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

const rowPlan = `
variable "url" { type = string }
backend "openai" "srv" { url = "${var.url}/v1" }
hardware "h200" { gpu = "NVIDIA H200" }
workload "plain" {
  prompt_tokens = 32
  max_tokens    = 4
}
workload "goal" {
  prompt_tokens = 32
  max_tokens    = 4
  goal          = result.ttft_p50_s < 0.5
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.srv]
  hardware = [hardware.h200]
  workload = [workload.plain, workload.goal]
  model_id = "tiny-id"
}
`

// rowSamples are n requests of 4 tokens with the given TTFT, 10 ms apart after it; a
// non-nil err makes every one fail.
func rowSamples(n int, ttft time.Duration, promptTokens int, err *backends.Error) stats.Runs {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var ss []backends.Sample
	for i := 0; i < n; i++ {
		s := backends.Sample{Start: start, FirstToken: ttft, End: ttft + 30*time.Millisecond,
			OutputTokens: 4, Chunks: 4, TokenSource: backends.TokensUsage, PromptTokens: promptTokens}
		if err != nil {
			s = backends.Sample{Start: start, End: time.Millisecond, Err: err}
		}
		ss = append(ss, s)
	}
	run := stats.MeasuredRun{Samples: ss, Window: stats.Window{Start: start, End: start.Add(time.Second)}}
	return stats.SummarizeRuns([]stats.MeasuredRun{run}, stats.Target{PromptTokens: 32, MaxTokens: 4})
}

func gpuSummary(attributed bool) gpu.Summary {
	return gpu.Summary{MemoryAPI: "v2", Ticks: 2, Devices: []gpu.DeviceSummary{{
		BaselineUsedBytes: 1e9, ProcessAttributed: attributed,
		Series: []gpu.Point{{UsedBytes: 3e9, ProcessBytes: 2e9}, {UsedBytes: 5e9, ProcessBytes: 4e9}},
	}}}
}

func TestBuildRow(t *testing.T) {
	_, cells := loadPlan(t, rowPlan, "http://127.0.0.1:1")
	byWorkload := map[string]*plan.Cell{}
	for _, c := range cells {
		byWorkload[c.Workload.Name] = c
	}
	started := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
	ok := func(ttft time.Duration) levelMeasurement {
		return levelMeasurement{Stats: rowSamples(2, ttft, 32, nil), Started: started, Ended: started.Add(time.Minute)}
	}
	nan := math.NaN()

	for _, c := range []struct {
		name       string
		workload   string
		level      plan.LoadLevel
		m          levelMeasurement
		rc         rowContext
		wantStatus string
		wantGoal   string
		wantNotes  string
		// VRAM columns: baseline, peak, per process (NaN: not measured), and the source.
		wantVRAM   [3]float64
		wantSource string
		check      func(t *testing.T, r ledger.Row)
	}{{
		name: "ok", workload: "plain", level: plan.LoadLevel{Concurrency: 2}, m: ok(100 * time.Millisecond),
		rc:         rowContext{Plan: "bench", PlanPath: "/p/plan.hcl", PlanHash: "abc", Version: "v1.2"},
		wantStatus: ledger.StatusOK, wantVRAM: [3]float64{nan, nan, nan}, wantSource: "no GPU telemetry",
		check: func(t *testing.T, r ledger.Row) {
			if r.Plan != "bench" || r.PlanPath != "/p/plan.hcl" || r.PlanHash != "abc" || r.Version != "v1.2" {
				t.Errorf("plan %q %q %q, version %q", r.Plan, r.PlanPath, r.PlanHash, r.Version)
			}
			if r.CellID != byWorkload["plain"].ID || r.Model != "tiny" || r.ModelID != "tiny-id" || r.Tool != "openai.srv" ||
				r.Hardware != "h200" || r.GPU != "NVIDIA H200" || r.Workload != "plain" || r.Concurrency != 2 || r.MaxTokens != 4 {
				t.Errorf("identity columns: %+v", r)
			}
			if r.Requests != 2 || r.Succeeded != 2 || r.OutputTokens != 8 || r.TTFT.P50 != 0.1 {
				t.Errorf("requests %d, ok %d, tokens %d, TTFT p50 %v", r.Requests, r.Succeeded, r.OutputTokens, r.TTFT.P50)
			}
			if !r.Started.Equal(started) || !r.Ended.Equal(started.Add(time.Minute)) {
				t.Errorf("started %v, ended %v", r.Started, r.Ended)
			}
			// No monitor ran: the self-check columns stay unmeasured.
			if !math.IsNaN(r.ClientCPUPct) || r.Goal != "" {
				t.Errorf("client CPU %v, goal %q", r.ClientCPUPct, r.Goal)
			}
		},
	}, {
		name: "every request failed", workload: "plain", level: plan.LoadLevel{Concurrency: 1},
		m: levelMeasurement{Stats: rowSamples(3, 0, 0, &backends.Error{Class: backends.ErrServer, Message: "boom"}),
			FirstError: "HTTP 500: boom"},
		wantStatus: ledger.StatusFailed, wantNotes: "every request failed: HTTP 500: boom",
		wantVRAM: [3]float64{nan, nan, nan}, wantSource: "no GPU telemetry",
		check: func(t *testing.T, r ledger.Row) {
			if r.Requests != 3 || r.Failed != 3 || r.Succeeded != 0 {
				t.Errorf("requests %d, failed %d, ok %d", r.Requests, r.Failed, r.Succeeded)
			}
		},
	}, {
		name: "interrupted before a measured run", workload: "goal", level: plan.LoadLevel{Concurrency: 1},
		m:          levelMeasurement{Interrupted: true, GPU: gpu.Summary{Note: "no measured run"}},
		wantStatus: ledger.StatusInterrupted, wantNotes: "interrupted",
		wantVRAM: [3]float64{nan, nan, nan}, wantSource: "no measured run",
	}, {
		name: "goal met", workload: "goal", level: plan.LoadLevel{Concurrency: 1}, m: ok(100 * time.Millisecond),
		wantStatus: ledger.StatusOK, wantGoal: ledger.GoalMet,
		wantVRAM: [3]float64{nan, nan, nan}, wantSource: "no GPU telemetry",
	}, {
		name: "goal missed", workload: "goal", level: plan.LoadLevel{Concurrency: 1}, m: ok(900 * time.Millisecond),
		wantStatus: ledger.StatusOK, wantGoal: ledger.GoalMissed, wantNotes: "goal missed: result.ttft_p50_s = 0.9",
		wantVRAM: [3]float64{nan, nan, nan}, wantSource: "no GPU telemetry",
	}, {
		name: "VRAM attributed to the server's processes", workload: "plain", level: plan.LoadLevel{Concurrency: 1},
		m:          func() levelMeasurement { m := ok(100 * time.Millisecond); m.GPU = gpuSummary(true); return m }(),
		wantStatus: ledger.StatusOK, wantVRAM: [3]float64{1, 5, 4}, wantSource: "v2",
	}, {
		name: "VRAM without process attribution", workload: "plain", level: plan.LoadLevel{Concurrency: 1},
		m:          func() levelMeasurement { m := ok(100 * time.Millisecond); m.GPU = gpuSummary(false); return m }(),
		wantStatus: ledger.StatusOK, wantVRAM: [3]float64{1, 5, nan}, wantSource: "v2",
	}, {
		name: "open loop with the client self-check", workload: "plain", level: plan.LoadLevel{Concurrency: 4, RequestRate: 2},
		m: func() levelMeasurement {
			m := ok(100 * time.Millisecond)
			m.Monitored = true
			m.Stats.Pooled.SendLag = stats.Dist{N: 1, Max: 0.001234567}
			m.Client = selfcheck.Report{CPUPercent: 12.5, LagP99: 3 * time.Millisecond, Cores: 2}
			return m
		}(),
		// The self-check's warning: 3 ms of scheduling lag against a
		// 10 ms TPOT.
		wantStatus: ledger.StatusOK,
		// 10 ms TPOT. The send lag is a column, not a note.
		wantNotes: "client scheduling lag p99 3ms is above 10% of the mean TPOT 10ms: some chunks were stamped late",
		wantVRAM:  [3]float64{nan, nan, nan}, wantSource: "no GPU telemetry",
		check: func(t *testing.T, r ledger.Row) {
			if r.RequestRate != 2 || r.ClientCPUPct != 12.5 || r.ClientLagP99Ms != 3 {
				t.Errorf("rate %v, client CPU %v%%, lag p99 %v ms", r.RequestRate, r.ClientCPUPct, r.ClientLagP99Ms)
			}
			if r.SendLag.Max != 0.001234567 {
				t.Errorf("send lag max %v s, want 0.001234567", r.SendLag.Max)
			}
		},
	}, {
		name: "calibration fills a prompt count the server did not give", workload: "plain", level: plan.LoadLevel{Concurrency: 1},
		m:          levelMeasurement{Stats: rowSamples(2, 100*time.Millisecond, 0, nil)},
		rc:         rowContext{ModelNote: "model tiny (q4)", Calibration: executor.Calibration{Actual: 30, Note: "5 words short"}},
		wantStatus: ledger.StatusOK, wantNotes: "model tiny (q4); 5 words short",
		wantVRAM: [3]float64{nan, nan, nan}, wantSource: "no GPU telemetry",
		check: func(t *testing.T, r ledger.Row) {
			if r.PromptTokensActual != 30 || r.PromptTokensRequested != 32 {
				t.Errorf("prompt tokens %d → %v, want 32 → 30 (calibrated)", r.PromptTokensRequested, r.PromptTokensActual)
			}
		},
	}, {
		name: "the server's prompt count wins over calibration", workload: "plain", level: plan.LoadLevel{Concurrency: 1},
		m:          ok(100 * time.Millisecond),
		rc:         rowContext{Calibration: executor.Calibration{Actual: 30}, Estimate: &gpu.VRAMEstimate{TotalBytes: 6e9}},
		wantStatus: ledger.StatusOK, wantVRAM: [3]float64{nan, nan, nan}, wantSource: "no GPU telemetry",
		check: func(t *testing.T, r ledger.Row) {
			if r.PromptTokensActual != 32 || r.VRAMEstimateGB != 6 {
				t.Errorf("prompt tokens actual %v, want 32; VRAM estimate %v GB, want 6", r.PromptTokensActual, r.VRAMEstimateGB)
			}
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			r := buildRow(byWorkload[c.workload], c.level, c.m, c.rc)
			// Two requests bound no percentile, and the last note says so.
			const unbounded = "no 95% interval for p50, p90, p95, p99 from 2 requests (p99 needs 368)"
			if c.wantStatus == ledger.StatusOK && r.Succeeded == 2 {
				c.wantNotes = strings.TrimPrefix(c.wantNotes+"; "+unbounded, "; ")
			}
			if r.Status != c.wantStatus || r.Goal != c.wantGoal || r.Notes != c.wantNotes {
				t.Errorf("status %q, goal %q, notes %q; want %q, %q, %q", r.Status, r.Goal, r.Notes, c.wantStatus, c.wantGoal, c.wantNotes)
			}
			got := [3]float64{r.VRAMBaselineGB, r.VRAMPeakGB, r.VRAMProcessGB}
			for i := range got {
				if !same(got[i], c.wantVRAM[i]) {
					t.Errorf("VRAM baseline, peak, process = %v GB, want %v", got, c.wantVRAM)
					break
				}
			}
			if r.VRAMSource != c.wantSource {
				t.Errorf("VRAM source %q, want %q", r.VRAMSource, c.wantSource)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}

}

func TestPhaseWarnings(t *testing.T) {
	row := ledger.NewRow()
	row.TTFT.P50 = 0.1
	row.SendDelay.P50 = 0.0005 // 0.5% of TTFT: not worth a note
	if w := phaseWarnings(row); len(w) != 0 {
		t.Fatalf("warnings for a small send delay: %v", w)
	}
	row.SendDelay.P50 = 0.004
	row.NewConnections, row.ConnectSetup.Max = 3, 0.02
	w := phaseWarnings(row)
	if len(w) != 2 || w[0] != "client send delay p50 4ms is 4.0% of TTFT p50: the client's own sending "+
		"(start stamp to request written) inflated TTFT; fewer streams per core shrink it" ||
		w[1] != "3 request(s) opened a new connection (set-up up to 20ms, inside their TTFT)" {
		t.Fatalf("warnings = %q", w)
	}
}

// The quickstart's case: a 41 µs send delay and a 60 µs connection set-up on a 4 ms TTFT
// are over 1% of it but under selfcheck.NoteFloor, below any server's run-to-run noise.
func TestPhaseWarningsFloor(t *testing.T) {
	row := ledger.NewRow()
	row.TTFT.P50 = 0.004
	row.SendDelay.P50 = 41e-6
	row.NewConnections, row.ConnectSetup.Max = 1, 60e-6
	if w := phaseWarnings(row); len(w) != 0 {
		t.Fatalf("notes for delays under the floor: %q", w)
	}
	row.SendDelay.P50 = 150e-6
	if w := phaseWarnings(row); len(w) != 1 || !strings.Contains(w[0], "send delay p50 150µs is 3.8% of TTFT p50") {
		t.Fatalf("a 150 µs send delay (3.8%% of TTFT) is worth a note: %q", w)
	}
}
