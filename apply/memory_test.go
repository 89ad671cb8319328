package apply

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/serverstats"
)

func TestProcessMemoryColumns(t *testing.T) {
	_, cells := loadPlan(t, rowPlan, "http://127.0.0.1:1")
	cell := cells[0]
	at := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
	m := levelMeasurement{Stats: rowSamples(2, 100*time.Millisecond, 32, nil), Started: at, Ended: at.Add(time.Second),
		GPU: gpu.Summary{Note: gpu.NoteLibraryNotFound},
		Proc: procmem.Summary{Source: procmem.SourcePSS, HasPSS: true, Ticks: 3, MaxProcesses: 2,
			BaselineRSS: 150e6, PeakRSS: 200e6, BaselinePSS: 120e6, PeakPSS: 170e6},
		Server: serverstats.Report{Models: []serverstats.ModelMemory{{Name: "tiny-id:latest", SizeBytes: 120e6}}}}
	est := gpu.VRAMEstimate{TotalBytes: 160e6}
	row := buildRow(cell, plan.LoadLevel{Concurrency: 1}, m, rowContext{Estimate: &est})

	if row.MemPeakGB != 0.2 || row.MemBaselineGB != 0.15 || row.MemPSSPeakGB != 0.17 {
		t.Errorf("peak %v, baseline %v, PSS peak %v GB: want RSS 0.2 and 0.15, PSS 0.17 beside them",
			row.MemPeakGB, row.MemBaselineGB, row.MemPSSPeakGB)
	}
	if !strings.HasPrefix(row.MemSource, procmem.SourceRSS) || !strings.Contains(row.MemSource, "2 processes") || !strings.Contains(row.MemSource, "PSS beside it") {
		t.Errorf("source %q", row.MemSource)
	}
	if row.ServerSizeGB != 0.12 {
		t.Errorf("server size %v GB, want Ollama's /api/ps size 0.12", row.ServerSizeGB)
	}
	if math.Abs(row.MemEstimateDiffPct-25) > 1e-9 {
		t.Errorf("difference to the estimate %v%%, want +25%% (0.2 GB against 0.16)", row.MemEstimateDiffPct)
	}
	if !strings.Contains(row.Notes, "+25% against the seed's estimate") {
		t.Errorf("notes lack the comparison with the estimate: %s", row.Notes)
	}
	if gb, src, ok := row.MemoryGB(); !ok || gb != 0.2 || src != row.MemSource {
		t.Errorf("MemoryGB() = %v %q %v", gb, src, ok)
	}

	// A GPU figure wins over the process's, and the difference is against it.
	m.GPU = gpuSummary(true)
	row = buildRow(cell, plan.LoadLevel{Concurrency: 1}, m, rowContext{Estimate: &est})
	if gb, _, _ := row.MemoryGB(); gb != row.VRAMPeakGB || math.IsNaN(gb) {
		t.Errorf("with NVML the figure is %v, want the VRAM peak %v", gb, row.VRAMPeakGB)
	}

	// Nothing read: no figure, and the reason stands where it would be.
	m.GPU, m.Proc = gpu.Summary{Note: gpu.NoteLibraryNotFound}, procmem.Summary{Note: "no process memory: not ours"}
	row = buildRow(cell, plan.LoadLevel{Concurrency: 1}, m, rowContext{Estimate: &est})
	if _, src, ok := row.MemoryGB(); ok || src != "no process memory: not ours" || !math.IsNaN(row.MemEstimateDiffPct) {
		t.Errorf("no reading: MemoryGB source %q ok %v, diff %v", src, ok, row.MemEstimateDiffPct)
	}
}

func TestProcMonitorWithoutAServer(t *testing.T) {
	_, cells := loadPlan(t, rowPlan, "http://127.0.0.1:1")
	pm := newProcMonitor(cells[0], nil)
	pm.start(t.Context())
	var m levelMeasurement
	pm.stop(&m)
	if !strings.Contains(m.Proc.Note, "not started by planrun") {
		t.Errorf("note %q: want why an unmanaged server's memory is not read", m.Proc.Note)
	}
}

// Where a cell's server runs decides what is read: the tree of a server planrun started
// here; a process exporter the hardware names, for a server on another host or one
// planrun did not start; otherwise nothing, with the way to get a figure.
func TestProcMonitorChoosesWhatToRead(t *testing.T) {
	proc := &servers.Process{}
	exporterURL := "http://gpu-a:9256/metrics"
	for _, tc := range []struct {
		name     string
		hw       *plan.Hardware
		proc     *servers.Process
		exporter string
		why      string
	}{
		{"a server planrun started here", nil, proc, "", ""},
		{"no server block", nil, nil, "", "not started by planrun"},
		{"no server block, an exporter beside it", &plan.Hardware{Telemetry: plan.Telemetry{Process: exporterURL}}, nil, exporterURL, ""},
		{"a remote host", &plan.Hardware{Host: "gpu-a"}, nil, "", "runs on host gpu-a (run planrun process-exporter there"},
		{"a remote host with an exporter", &plan.Hardware{Host: "gpu-a", Telemetry: plan.Telemetry{Process: exporterURL, ProcessGroup: "vllm"}}, proc, exporterURL, ""},
	} {
		pm := newProcMonitor(&plan.Cell{Hardware: tc.hw}, tc.proc)
		local := tc.exporter == "" && tc.why == ""
		if (pm.proc != nil) != local || pm.exporter != tc.exporter || !strings.Contains(pm.why, tc.why) || (tc.why == "") != (pm.why == "") {
			t.Errorf("%s: proc %v, exporter %q, why %q", tc.name, pm.proc != nil, pm.exporter, pm.why)
		}
		if tc.hw != nil && pm.group != tc.hw.Telemetry.ProcessGroup {
			t.Errorf("%s: group %q", tc.name, pm.group)
		}
	}
}

// Readings that failed are said in the notes, and so is a baseline taken late.
func TestProcessMemoryNotesFailedReadings(t *testing.T) {
	_, cells := loadPlan(t, rowPlan, "http://127.0.0.1:1")
	at := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
	m := levelMeasurement{Stats: rowSamples(2, 100*time.Millisecond, 32, nil), Started: at, Ended: at.Add(time.Second),
		GPU: gpu.Summary{Note: gpu.NoteLibraryNotFound},
		Proc: procmem.Summary{Origin: "process-exporter http://gpu-a:9256/metrics", Ticks: 4, Failures: 2, LastError: "connection refused",
			BaselineLate: true, MaxProcesses: 1, BaselineRSS: 150e6, PeakRSS: 200e6}}
	row := buildRow(cells[0], plan.LoadLevel{Concurrency: 1}, m, rowContext{})
	if row.MemSource != "process-exporter http://gpu-a:9256/metrics, RSS, 1 process" {
		t.Errorf("source %q", row.MemSource)
	}
	for _, want := range []string{"2 of 6 readings failed (last: connection refused)", "mem_baseline_gb is the first that answered"} {
		if !strings.Contains(row.Notes, want) {
			t.Errorf("notes lack %q: %s", want, row.Notes)
		}
	}
}
