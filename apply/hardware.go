package apply

import (
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
)

// checkPins fails a cell whose hardware pins CPUs or GPUs that this machine cannot
// give, before anything is started or sent: every core and GPU they name must be on
// it. (That pins need a server block is the plan's check.)
// A gpu name NVML does not see fails the cell too: its rows would name the wrong card.
func (a *applier) checkPins(cell *plan.Cell) error {
	hw := cell.Hardware
	if hw == nil || !isLocalHost(hw.Host) {
		return nil
	}
	at := func(r hcl.Range) string {
		if r.Filename == "" {
			return "hardware " + strconv.Quote(hw.Name)
		}
		return r.String() + ": hardware " + strconv.Quote(hw.Name)
	}
	if tel := a.telemetryFor(cell); tel.Available() && hw.GPU != "" {
		if ws := gpu.CheckDeclared(tel.Info(), hw.GPU, 0); len(ws) > 0 {
			return fmt.Errorf("hardware %q: %s: no request of the cell was sent", hw.Name, ws[0])
		}
	}
	p := hw.Pins
	if !p.Pinned() || cell.Server == nil {
		return nil // pins without a server are the plan's to refuse (plan.CheckCells)
	}
	if len(p.CPUSet) > 0 {
		list, have, err := procmem.CPUsAllowed(os.Getpid())
		if err != nil {
			return fmt.Errorf("%s: cpus = %q cannot be checked on this machine: %v", at(p.CPURange), p.CPUs, err)
		}
		for _, c := range p.CPUSet {
			if !slices.Contains(have, c) {
				return fmt.Errorf("%s: cpus = %q names CPU %d, which this machine does not give planrun (allowed: %s); no request of the cell was sent",
					at(p.CPURange), p.CPUs, c, list)
			}
		}
	}
	if len(p.GPUs) > 0 {
		if _, err := a.tel.Select(p.GPUs); err != nil {
			return fmt.Errorf("%s: gpus = %v: %v; no request of the cell was sent", at(p.GPURange), p.GPUs, err)
		}
	}
	return nil
}

func isLocalHost(h string) bool {
	switch h {
	case "", "localhost", "127.0.0.1", "::1":
		return true
	}
	name, _ := os.Hostname()
	return h == name
}

// telemetryFor is the GPU telemetry that can measure the cell's server: local NVML, or
// none for a server on another host (its hardware block names the host), where local
// NVML would measure the wrong machine.
func (a *applier) telemetryFor(cell *plan.Cell) *gpu.Telemetry {
	if cell.Hardware != nil && !isLocalHost(cell.Hardware.Host) {
		return gpu.Remote(cell.Hardware.Host)
	}
	if hw := cell.Hardware; hw != nil && len(hw.Pins.GPUs) > 0 {
		if sel, err := a.tel.Select(hw.Pins.GPUs); err == nil {
			return sel // checkPins failed the cell when the GPUs are not there
		}
	}
	return a.tel
}
