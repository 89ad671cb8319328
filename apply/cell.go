package apply

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/apply/capacity"
	"github.com/planrun/planrun/apply/pins"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
)

// runCell runs every level of one cell and returns its status.
func (a *applier) runCell(ctx context.Context, cell *plan.Cell) ledger.CellStatus {
	todo, st := a.rec.pending(cell)
	if len(todo) == 0 && !a.capacityPending(cell) {
		a.note("%s: already complete in %s, skipped", cell.ID, a.rec.res.RunDir)
		if cell.Workload.Capacity != nil {
			st.Capacity = capacity.New(cell, a.rec.rows()).Answer()
		}
		return st
	}
	setup, err := a.prepareCell(ctx, cell)
	if err == nil && cell.Workload.Agents > 1 {
		setup.fleet, err = a.startAgents(ctx, cell, setup)
		if err != nil && ctx.Err() != nil {
			err = errInterrupted
		}
		if setup.fleet != nil {
			defer func() {
				a.rec.recordAgents(setup.fleet.Agents(cell.ID, agentSources(cell)))
				setup.fleet.Close()
			}()
		}
	}
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

	a.quality.Run(ctx, cell, setup.backend) // at concurrency 1, apart from the timed levels
	for _, lv := range todo {
		if ctx.Err() != nil {
			st.Status = ledger.StatusInterrupted
			break
		}
		row := a.runLevel(ctx, cell, setup, lv)
		countRow(&st, row)
		if row.Status == ledger.StatusInterrupted || setup.agentFault {
			break // an agent that failed ended its fleet: the cell's next levels cannot run
		}
		if row.Goal == ledger.GoalMissed {
			a.note("%s: %s", cell.ID, capacityNote(cell.Workload, a.rec.rows(), cell.ID))
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

// cellSetup is what every level of a cell runs with once the cell is ready.
type cellSetup struct {
	backend backends.Backend
	proc    *servers.Process // the server planrun started for the cell; nil when none
	tmpl    backends.Request
	prompts *executor.Prompts
	cal     executor.Calibration
	// shapes are the requests' own lengths, when the workload draws them (traffic.Workload.Shapes).
	shapes []executor.Shape
	// fleet sends the levels when the workload has agents > 1 (agents.go); agentFault
	// is set once one of its agents failed a level.
	fleet      *fleet.Fleet
	agentFault bool
	// levels counts the cell's levels measured so far (prepareCache).
	levels int
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
		spec := pins.Spec(cell, cell.Server.Spec)
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
		a.rec.recordServer(spec, "")
		a.rec.recordStartup(spec.Name, p.StartupTime())
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
		a.rec.recordServer(cell.Server.Spec, cell.Backend.Addr)
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

func (a *applier) backend(cell *plan.Cell) (backends.Backend, error) {
	key := backendKey(cell)
	if b, ok := a.known.built[key]; ok {
		return b, nil
	}
	b, err := a.o.NewBackend(pins.BackendConfig(cell))
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
		a.rec.recordVersion(addr, pr.Version)
	}
	setIn(&a.known.listed, bk, pr.Models)
	if d, ok := pr.ModelDigests[cell.ModelID]; ok && d != "" {
		a.rec.recordDigest(addr+" "+cell.ModelID, d) // keyed as ensureModel keys it
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
	// A name that differs only in case is refused on every server, Ollama too: it would
	// answer, but the rows would carry no digest and no server memory for the model.
	if listed := backends.CaseOnly(pr.Models, id); listed != "" {
		return fmt.Errorf("model_id %s differs only in case from %s, which the server at %s lists. No request was sent: "+
			"set model_id = %s (planrun matches model names exactly, so the manifest records the listed model's digest).",
			strconv.Quote(id), strconv.Quote(listed), ledger.SafeURL(pr.URL), strconv.Quote(strings.TrimSuffix(listed, ":latest")))
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
