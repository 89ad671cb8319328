package apply

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/planrun/planrun/ledger"
)

// nodeRunDir prepares a Slurm job's run directory on the node: created when missing,
// resumed (as -resume would) when an earlier attempt of the job left a manifest there.
func (a *applier) nodeRunDir() (string, error) {
	dir := a.o.RunDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the run directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ledger.ManifestFile)); err == nil {
		a.o.Resume = dir
	}
	return dir, nil
}

// loadResume reads the run directory's manifest and rows: the plan must be the same (same
// hash), and levels whose rows are complete (ok, or failed after measuring) are not run
// again.
func (a *applier) loadResume() error {
	dir := a.o.Resume
	m, err := ledger.ReadManifest(filepath.Join(dir, ledger.ManifestFile))
	if err != nil {
		return fmt.Errorf("cannot resume %s: %w", dir, err)
	}
	if m.PlanHash != a.o.Plan.Hash {
		return fmt.Errorf("cannot resume %s: it was run from a different plan (hash %.12s, this plan %.12s); start a new run instead", dir, m.PlanHash, a.o.Plan.Hash)
	}
	a.manifest = m
	rows, err := ledger.ReadLedger(filepath.Join(dir, ledger.ResultsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot resume %s: %w", dir, err)
	}
	for _, r := range rows {
		// A cell that failed before measuring (its server was down, say) is tried again.
		if r.Status == ledger.StatusOK || r.Status == ledger.StatusFailed && r.Requests > 0 {
			a.done[rowKey(r)] = r
		}
	}
	return nil
}

// noteSkipped says, cell by cell, which levels a resumed run skips as already complete.
func (a *applier) noteSkipped() {
	for _, cell := range a.o.Cells {
		var names []string
		for _, lv := range cell.Workload.Levels() {
			if _, ok := a.done[levelKey{cell.ID, lv}]; ok {
				names = append(names, cell.Workload.LevelName(lv))
			}
		}
		if len(names) > 0 {
			a.note("resume: %s: skipping %s, already complete", cell.ID, strings.Join(names, ", "))
		}
	}
}
