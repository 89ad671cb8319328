package apply

import (
	"math"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/serverstats"
)

// What vLLM's /metrics counted over the window lands in the row, and a note sets its
// own means beside planrun's.
func TestVLLMFiguresIntoRow(t *testing.T) {
	row := ledger.NewRow()
	row.TTFT.Mean, row.TPOT.Mean, row.E2E.Mean = 0.013, 0.0032, 0.11
	s := serverstats.Report{PrefixCacheHits: 384, PrefixCacheQueries: 512, ServerLatency: serverstats.VLLMLatency{
		TTFT: serverstats.Histogram{Sum: 0.12, Count: 10},
		TPOT: serverstats.Histogram{Sum: 0.03, Count: 10},
		E2E:  serverstats.Histogram{Sum: 1.0, Count: 10},
		HTTP: serverstats.Histogram{Sum: 1.125, Count: 10},
	}}
	notes := vllmFigures(&row, s)
	if row.PrefixCacheHitPct != 75 || math.Abs(row.ServerTTFTMeanS-0.012) > 1e-12 ||
		math.Abs(row.ServerTPOTMeanMs-3) > 1e-9 || math.Abs(row.ServerE2EMeanS-0.1) > 1e-12 {
		t.Errorf("row: prefix hit %v%%, server TTFT %v s, TPOT %v ms, E2E %v s", row.PrefixCacheHitPct, row.ServerTTFTMeanS, row.ServerTPOTMeanMs, row.ServerE2EMeanS)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "TTFT mean 0.0120 s (planrun 0.0130)") || !strings.Contains(notes[0], "TPOT mean 3.00 ms (planrun 3.20)") {
		t.Errorf("notes %q", notes)
	}
	if math.Abs(row.ServerHTTPMeanS-0.1125) > 1e-12 || !strings.Contains(notes[0], "its HTTP layer 0.1125 s over 10 requests, 12.5 ms more than the engine's E2E") {
		t.Errorf("HTTP layer: row %v s, notes %q", row.ServerHTTPMeanS, notes)
	}

	// Not vLLM (or no request finished in the window): the columns stay empty, no note.
	other := ledger.NewRow()
	if notes := vllmFigures(&other, serverstats.Report{}); len(notes) != 0 || !math.IsNaN(other.ServerTTFTMeanS) || !math.IsNaN(other.PrefixCacheHitPct) {
		t.Errorf("no vLLM figures: notes %q, row %v %v", notes, other.ServerTTFTMeanS, other.PrefixCacheHitPct)
	}
}

// Where a row's VRAM figure came from, when NVML on this machine measured none: the
// hardware's DCGM exporter, an exporter that gave no reading, or a remote host without
// telemetry; Ollama's own figure is named beside any of them.
func TestVRAMSources(t *testing.T) {
	remote := &plan.Hardware{Name: "b", Host: "gpu-b"}
	dcgm := serverstats.Report{URL: "http://gpu-a:9400/metrics", GPUs: []serverstats.DCGMGPU{
		{UsedBytes: serverstats.Stat{Peak: 3e9}}, {UsedBytes: serverstats.Stat{Peak: 1.5e9}}}}
	for _, tc := range []struct {
		name       string
		hw         *plan.Hardware
		nvml       float64 // the peak NVML measured; NaN for none
		serverVRAM float64
		m          levelMeasurement
		wantPeak   float64
		wantSource string
	}{
		{"NVML measured it", remote, 7, 0, levelMeasurement{DCGM: dcgm}, 7, "nvml"},
		{"the DCGM exporter, summed over the host's GPUs", remote, math.NaN(), 0, levelMeasurement{DCGM: dcgm}, 4.5,
			"dcgm exporter http://gpu-a:9400/metrics (framebuffer used, peak)"},
		{"an exporter without a reading", remote, math.NaN(), 0,
			levelMeasurement{DCGM: serverstats.Report{URL: "http://gpu-a:9400/metrics", LastError: "connection refused"}}, math.NaN(),
			"none: dcgm exporter http://gpu-a:9400/metrics gave no reading (connection refused)"},
		{"a remote host without telemetry", remote, math.NaN(), 0, levelMeasurement{}, math.NaN(),
			"none: remote host gpu-b without telemetry (add telemetry { dcgm = URL })"},
		{"a remote host, with Ollama's own figure", remote, math.NaN(), 2.1, levelMeasurement{}, math.NaN(),
			"none: remote host gpu-b without telemetry (add telemetry { dcgm = URL }); server_vram_gb from ollama /api/ps"},
		{"this machine without a GPU: left as NVML said", &plan.Hardware{Name: "l", Host: "localhost"}, math.NaN(), 0,
			levelMeasurement{}, math.NaN(), "nvml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := ledger.NewRow()
			row.VRAMPeakGB, row.VRAMSource, row.ServerVRAMGB = tc.nvml, "nvml", tc.serverVRAM
			setVRAMSources(&plan.Cell{Hardware: tc.hw}, &row, tc.m)
			if !same(row.VRAMPeakGB, tc.wantPeak) || row.VRAMSource != tc.wantSource {
				t.Errorf("VRAM peak %v GB from %q, want %v GB from %q", row.VRAMPeakGB, row.VRAMSource, tc.wantPeak, tc.wantSource)
			}
		})
	}
}

// What Ollama's /api/ps said of the cell's model becomes server_vram_gb, with a note
// when the model is on the CPU or partly offloaded; vLLM's KV cache use becomes its
// peak percent. Other models the server holds are not the cell's.
func TestServerFiguresOfOllama(t *testing.T) {
	cell := &plan.Cell{ModelID: "tiny", Backend: &plan.Backend{Kind: "ollama"}}
	for _, tc := range []struct {
		name     string
		s        serverstats.Report
		wantVRAM float64
		wantKV   float64
		wantNote string
	}{
		{"all on the GPU", serverstats.Report{Models: []serverstats.ModelMemory{{Name: "tiny:latest", SizeBytes: 2e9, SizeVRAMBytes: 2e9},
			{Name: "other", SizeBytes: 9e9, SizeVRAMBytes: 0}}}, 2, math.NaN(), ""},
		{"on the CPU", serverstats.Report{Models: []serverstats.ModelMemory{{Name: "tiny", SizeBytes: 2e9}}}, 0, math.NaN(),
			"Ollama runs this model on the CPU (size_vram 0)"},
		{"partly offloaded", serverstats.Report{Models: []serverstats.ModelMemory{{Name: "tiny", SizeBytes: 3e9, SizeVRAMBytes: 1e9}}}, 1, math.NaN(),
			"Ollama keeps part of the model in CPU memory (size 3.00 GB, size_vram 1.00 GB): partial offload slows decoding"},
		{"vLLM's KV cache", serverstats.Report{KVCacheUsage: serverstats.Stat{Peak: 0.25, N: 3}}, math.NaN(), 25, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := ledger.NewRow()
			notes := serverFigures(cell, &row, gpu.Summary{}, tc.s, nil)
			if !same(row.ServerVRAMGB, tc.wantVRAM) || !same(row.KVCachePeakPct, tc.wantKV) || strings.Join(notes, "; ") != tc.wantNote {
				t.Errorf("server VRAM %v GB, KV peak %v%%, notes %q; want %v, %v, %q", row.ServerVRAMGB, row.KVCachePeakPct, notes,
					tc.wantVRAM, tc.wantKV, tc.wantNote)
			}
		})
	}
}

// An Ollama server planrun starts with OLLAMA_NUM_PARALLEL reserves the KV cache of that
// many sequences when it loads the model, so the estimate counts them at every level;
// elsewhere it counts the level's concurrency.
func TestKVSequences(t *testing.T) {
	server := func(env map[string]string) *plan.Server {
		s := &plan.Server{}
		s.Env = env
		return s
	}
	level := plan.LoadLevel{Concurrency: 1}
	for _, tc := range []struct {
		name string
		cell plan.Cell
		want int
	}{
		{"ollama, parallel 4", plan.Cell{Backend: &plan.Backend{Kind: "ollama"}, Server: server(map[string]string{"OLLAMA_NUM_PARALLEL": "4"})}, 4},
		{"ollama, parallel unset", plan.Cell{Backend: &plan.Backend{Kind: "ollama"}, Server: server(nil)}, 1},
		{"ollama, not started by planrun", plan.Cell{Backend: &plan.Backend{Kind: "ollama"}}, 1},
		{"openai on the same server", plan.Cell{Backend: &plan.Backend{Kind: "openai"}, Server: server(map[string]string{"OLLAMA_NUM_PARALLEL": "4"})}, 1},
		{"ollama, parallel not a number", plan.Cell{Backend: &plan.Backend{Kind: "ollama"}, Server: server(map[string]string{"OLLAMA_NUM_PARALLEL": "x"})}, 1},
	} {
		if got := kvSequences(&tc.cell, level); got != tc.want {
			t.Errorf("%s: %d sequences, want %d", tc.name, got, tc.want)
		}
	}
}
