package apply

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/executor"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
)

// runCell runs every level of one cell and returns its status.
func (a *applier) runCell(ctx context.Context, cell *plan.Cell) ledger.CellStatus {
	todo, st := a.pendingLevels(cell)
	if len(todo) == 0 && !a.capacityPending(cell) {
		a.note("%s: already complete in %s, skipped", cell.ID, a.res.RunDir)
		if cell.Workload.Capacity != nil {
			st.Capacity = newCapacitySearch(cell, a.res.Rows).answer()
		}
		return st
	}
	setup, err := a.prepareCell(ctx, cell)
	if errors.Is(err, errInterrupted) {
		st.Status = ledger.StatusInterrupted
		return st
	}
	if err != nil {
		if !errors.As(err, new(reported)) {
			a.note("%s: %s", cell.ID, err)
		}
		st.Status, st.Notes = ledger.StatusFailed, err.Error()
		a.recordUnmeasured(cell, todo[0], st.Notes)
		return st
	}

	for _, lv := range todo {
		if ctx.Err() != nil {
			st.Status = ledger.StatusInterrupted
			break
		}
		row := a.runLevel(ctx, cell, setup, lv)
		countRow(&st, row)
		if row.Status == ledger.StatusInterrupted {
			break
		}
		if row.Goal == ledger.GoalMissed {
			a.note("%s: %s", cell.ID, capacityNote(cell.Workload, a.res.Rows, cell.ID))
			break
		}
		if endsSweep(cell.Workload, row) {
			break
		}
	}
	if cell.Workload.Capacity != nil && st.Status != ledger.StatusInterrupted {
		if st.Capacity = a.searchCapacity(ctx, cell, setup, &st); st.Capacity != nil {
			a.note("%s: capacity: %s", cell.ID, st.Capacity)
		}
	}
	return st
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

// pendingLevels returns the levels of the cell still to run, and the cell's status so
// far: levels a resumed run already completed count towards it and are not run again.
func (a *applier) pendingLevels(cell *plan.Cell) ([]plan.LoadLevel, ledger.CellStatus) {
	st := ledger.CellStatus{ID: cell.ID, Status: ledger.StatusOK}
	var todo []plan.LoadLevel
	for _, lv := range cell.Workload.Levels() {
		if r, ok := a.done[levelKey{cell.ID, lv}]; ok {
			if r.Status == ledger.StatusFailed {
				st.Status = ledger.StatusFailed
			}
			if endsSweep(cell.Workload, r) {
				break // the sweep ended here before the interruption
			}
			continue
		}
		todo = append(todo, lv)
	}
	return todo, st
}

// cellSetup is what every level of a cell runs with once the cell is ready.
type cellSetup struct {
	backend backends.Backend
	proc    *servers.Process // the server planrun started for the cell; nil when none
	tmpl    backends.Request
	prompts *executor.Prompts
	cal     executor.Calibration
	// shapes are the requests' own lengths, when the workload draws them (traffic.Workload.Shapes).
	shapes []executor.Shape
}

// errInterrupted is prepareCell's answer when the run was interrupted while the cell's
// server was starting: the cell is interrupted, not failed.
var errInterrupted = errors.New("interrupted")

// prepareCell gets a cell ready to measure: its server started, its backend built and
// probed, its model present, and its prompt calibrated. An error says why the cell
// cannot run.
func (a *applier) prepareCell(ctx context.Context, cell *plan.Cell) (*cellSetup, error) {
	setup := &cellSetup{}
	if err := a.checkPins(cell); err != nil {
		return nil, err
	}
	if cell.Server != nil {
		spec := pinnedSpec(cell, cell.Server.Spec)
		if cur := a.mgr.Current(); cur == nil || cur.Name() != spec.Name {
			a.info("starting server %q: %s", spec.Name, strings.Join(spec.Command, " "))
		}
		p, err := a.mgr.Acquire(ctx, spec)
		if err != nil {
			if ctx.Err() != nil {
				return nil, errInterrupted
			}
			return nil, fmt.Errorf("server %q did not start: %v", spec.Name, err)
		}
		setup.proc = p
		a.recordServer(spec, "")
		setIn(&a.manifest.ServerStartup, spec.Name, p.StartupTime().Round(time.Millisecond).String())
	}

	b, err := a.backend(cell)
	if err != nil {
		return nil, err
	}
	setup.backend = b
	if err := a.checkQuantization(ctx, cell, setup, false); err != nil {
		return nil, err
	}
	if err := a.probe(ctx, cell, b); err != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, err
	}
	if cell.Server != nil {
		a.recordServer(cell.Server.Spec, a.manifest.ServerVersions[cell.Backend.Addr])
	}
	if err := a.ensureModel(ctx, cell, b); err != nil {
		return nil, err
	}
	if err := a.checkQuantization(ctx, cell, setup, true); err != nil {
		return nil, err
	}

	t := a.traffic[cell.Workload]
	setup.tmpl = t.Request(cell.ModelID)
	setup.prompts = t.Prompts(cell.ID)
	setup.shapes = t.Shapes()
	if err := checkContext(ctx, cell, setup); err != nil {
		return nil, err
	}
	setup.cal = a.calibrate(ctx, cell, setup)
	return setup, nil
}

// capacityNote says where a goal sweep ended: the last level that met the goal, with
// its throughput (the capacity at that goal), or that none did.
func capacityNote(w *plan.Workload, rows []ledger.Row, cellID string) string {
	var best *ledger.Row
	for i := range rows {
		r := &rows[i]
		if r.CellID == cellID && r.Goal == ledger.GoalMet {
			best = r
		}
	}
	if best == nil {
		return fmt.Sprintf("no level met the goal of workload %q; the sweep stopped at its first level", w.Name)
	}
	lv := rowKey(*best).level
	return fmt.Sprintf("goal of workload %q missed after %s: capacity at the goal is %s, %.1f output tok/s, %.2f req/s",
		w.Name, lv, lv, best.OutputTokS, best.RequestsPerSec)
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return ": " + n
}

// backendKey names a cell's backend client: one backend block serves several hosts when
// a matrix url gives each cell its own URL, and each host needs its own client.
func backendKey(cell *plan.Cell) string {
	if n := pinnedThreads(cell); n > 0 {
		return fmt.Sprintf("%s %s num_thread=%d", cell.Backend.Addr, cell.Backend.URL, n) // hardware.go
	}
	return cell.Backend.Addr + " " + cell.Backend.URL
}

func (a *applier) backend(cell *plan.Cell) (backends.Backend, error) {
	key := backendKey(cell)
	if b, ok := a.known.built[key]; ok {
		return b, nil
	}
	b, err := a.o.NewBackend(backendConfig(cell))
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", cell.Backend.Addr, err)
	}
	a.known.built[key] = b
	return b, nil
}

// probe records the server's version and the model's presence once per backend and
// model, for the manifest, and fails the cell before any request when the server cannot
// serve it: unreachable, its key missing or refused, no model list where one must be
// (a url without /v1), or a model it does not list. A backend's failure is noted once,
// however many cells it fails (errReported marks the repeats).
func (a *applier) probe(ctx context.Context, cell *plan.Cell, b backends.Backend) error {
	addr, bk := cell.Backend.Addr, backendKey(cell)
	for _, k := range []string{addr, bk} {
		if err, ok := a.known.unusable[k]; ok {
			return reported{err}
		}
	}
	if err, ok := a.known.probed[bk+" "+cell.ModelID]; ok {
		if err != nil {
			return reported{err}
		}
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pr := b.Probe(pctx, []string{cell.ModelID})
	if ctx.Err() != nil {
		return ctx.Err() // interrupted: nothing learnt about the server
	}
	if blocksMeasuring(pr) {
		err := fmt.Errorf("backend %s at %s cannot serve requests: %s",
			addr, ledger.SafeURL(pr.URL), strings.Join(pr.Problems, "; "))
		a.known.unusable[bk] = err
		if pr.ErrorClass == backends.ErrMissingKey {
			a.known.unusable[addr] = err // the environment, not the host: every url of the backend lacks it
		}
		return err
	}
	if pr.Version != "" {
		setIn(&a.manifest.ServerVersions, addr, pr.Version)
	}
	setIn(&a.known.listed, bk, pr.Models)
	if d, ok := pr.ModelDigests[cell.ModelID]; ok && d != "" {
		setIn(&a.manifest.ModelDigests, addr+" "+cell.ModelID, d) // keyed as ensureModel keys it
	}
	if root := pr.ModelRoots[cell.ModelID]; root != "" {
		a.recordWeights(cell, root)
	}
	err := absentModel(cell, b, pr)
	if err == nil {
		err = absentMixModel(cell, pr)
	}
	a.known.probed[bk+" "+cell.ModelID] = err
	if err != nil {
		return err
	}
	for _, p := range pr.Problems {
		a.note("%s: %s", addr, p)
	}
	return nil
}

// reported is a probe failure already noted for an earlier cell: the cell fails for the
// same reason, which is not printed again.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }

// absentModel is the error for a model the server's list lacks, or nil. A server that
// manages models (Ollama) is left to ensureModel, which pulls, checks or skips as
// ensure_model says; a server that lists no model at all says nothing about the names
// it accepts.
func absentModel(cell *plan.Cell, b backends.Backend, pr backends.ProbeResult) error {
	id := cell.ModelID
	if present, asked := pr.ModelsPresent[id]; !asked || present || len(pr.Models) == 0 {
		return nil
	}
	if _, ok := b.(backends.ModelManager); ok {
		return nil // ensureModel asks /api/show, which knows every name the server takes
	}
	return fmt.Errorf("%s No request was sent: set model_id to a name the server lists.",
		backends.AbsentModel(id, ledger.SafeURL(pr.URL), pr.Models))
}

// blocksMeasuring reports whether a probe found a backend that cannot answer any request:
// unreachable (refused, timed out), its key missing or refused, or no version or model
// list where the kind has one (404: the url is not the API's base).
func blocksMeasuring(pr backends.ProbeResult) bool {
	switch pr.ErrorClass {
	case backends.ErrUnauthorized, backends.ErrForbidden, backends.ErrNotFound:
		return true
	}
	return !pr.Reachable
}

// absentMixModel fails a cell whose workload's model mix names a model the server does
// not list (a LoRA adapter vLLM was not started with, a gateway route that is missing),
// before any of its requests is sent, naming where the plan gives the name.
func absentMixModel(cell *plan.Cell, pr backends.ProbeResult) error {
	for _, m := range cell.Workload.Models {
		if !backends.Lists(pr.Models, m.Name) {
			return fmt.Errorf("%s:%d: workload %q's models name %s: %s No request of the cell was sent "+
				"(a vLLM LoRA adapter is served, and listed, when vLLM starts with --enable-lora --lora-modules NAME=DIR).",
				m.Range.Filename, m.Range.Start.Line, cell.Workload.Name, strconv.Quote(m.Name),
				backends.AbsentModel(m.Name, ledger.SafeURL(pr.URL), pr.Models))
		}
	}
	return nil
}
