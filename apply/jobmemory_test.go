package apply

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
)

// A Slurm job's row says the figure is the whole job's, since when, and whether its
// peak fell in this level; a failed sstat leaves the reason and no figure.
func TestJobMemoryColumns(t *testing.T) {
	// As Slurm's scheduler says it (slurm's TestJobMemorySource).
	source := "sstat MaxRSS of job step 41.batch: the whole job (planrun's client and the servers it started), peak since the job started"
	before := placement.JobMemory{Peak: 300e6, Resident: 250e6}
	for _, tc := range []struct {
		name           string
		j              jobMemory
		peak, baseline float64
		says           []string
	}{
		{"peak in this level", jobMemory{Source: source + " at 2026-12-06T05:20:46Z", Before: before, After: placement.JobMemory{Peak: 400e6}},
			0.4, 0.25, []string{"sstat MaxRSS of job step 41.batch: the whole job (planrun's client", "since the job started at 2026-12-06T05:20:46Z", "reached during this level"}},
		{"peak before it", jobMemory{Source: source, Before: before, After: placement.JobMemory{Peak: 300e6}},
			0.3, 0.25, []string{"peak since the job started, reached before this level began: this level's own peak is at most this"}},
		{"no reading at the start", jobMemory{Source: source, BeforeErr: "sstat: timeout", After: placement.JobMemory{Peak: 300e6}},
			0.3, math.NaN(), []string{"not read as the level began (sstat: timeout)"}},
		{"no reading at the end", jobMemory{Source: source, Before: before, AfterErr: "sstat reports no memory for step 41.batch"},
			math.NaN(), math.NaN(), []string{"none: sstat reports no memory"}},
	} {
		row := ledger.NewRow()
		setJobMemory(&row, tc.j)
		if !same(row.MemJobPeakGB, tc.peak) || !same(row.MemJobBaselineGB, tc.baseline) {
			t.Errorf("%s: peak %v baseline %v, want %v %v", tc.name, row.MemJobPeakGB, row.MemJobBaselineGB, tc.peak, tc.baseline)
		}
		for _, s := range tc.says {
			if !strings.Contains(row.MemJobSource, s) {
				t.Errorf("%s: source %q lacks %q", tc.name, row.MemJobSource, s)
			}
		}
	}
	// Outside a job nothing is written.
	row := ledger.NewRow()
	setJobMemory(&row, jobMemory{})
	if row.MemJobSource != "" || !math.IsNaN(row.MemJobPeakGB) {
		t.Errorf("no job: %q %v", row.MemJobSource, row.MemJobPeakGB)
	}
}

// The table shows the job's figure only where the server's own is missing, and it is
// never held against the estimate (the client is in it).
func TestJobMemoryStandsInForTheProcessFigure(t *testing.T) {
	_, cells := loadPlan(t, rowPlan, "http://127.0.0.1:1")
	at := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
	m := levelMeasurement{Stats: rowSamples(2, 100*time.Millisecond, 32, nil), Started: at, Ended: at.Add(time.Second),
		GPU:  gpu.Summary{Note: gpu.NoteLibraryNotFound},
		Proc: procmem.Summary{Note: "no process memory: the server was not started by planrun"},
		Job:  jobMemory{Source: "sstat MaxRSS of job step 41.batch", After: placement.JobMemory{Peak: 400e6}}}
	est := gpu.VRAMEstimate{TotalBytes: 160e6}
	row := buildRow(cells[0], plan.LoadLevel{Concurrency: 1}, m, rowContext{Estimate: &est})
	if gb, src, ok := row.MemoryGB(); !ok || gb != 0.4 || src != row.MemJobSource {
		t.Errorf("MemoryGB() = %v %q %v, want the job's MaxRSS", gb, src, ok)
	}
	if !math.IsNaN(row.MemEstimateDiffPct) {
		t.Errorf("the job's figure was held against the estimate: %v%%", row.MemEstimateDiffPct)
	}
}
