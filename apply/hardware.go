package apply

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
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

// pinnedSpec is the server spec restricted to the cell's hardware pins: its CPU set, the
// OpenMP binding vLLM's CPU build takes from VLLM_CPU_OMP_THREADS_BIND, and
// CUDA_VISIBLE_DEVICES. A pinned spec is named for its hardware, so the manager starts a
// server per CPU or GPU set rather than reusing one started on another.
func pinnedSpec(cell *plan.Cell, spec servers.Spec) servers.Spec {
	hw := cell.Hardware
	if hw == nil || !hw.Pins.Pinned() {
		return spec
	}
	env := maps.Clone(spec.Env)
	if env == nil {
		env = map[string]string{}
	}
	setDefault := func(k, v string) {
		if _, ok := env[k]; !ok {
			env[k] = v
		}
	}
	if p := hw.Pins; len(p.CPUSet) > 0 {
		spec.CPUs = p.CPUSet
		setDefault("VLLM_CPU_OMP_THREADS_BIND", p.CPUs)
	}
	if g := hw.Pins.GPUs; len(g) > 0 {
		ids := make([]string, len(g))
		for i, n := range g {
			ids[i] = strconv.Itoa(n)
		}
		setDefault("CUDA_VISIBLE_DEVICES", strings.Join(ids, ","))
	}
	spec.Env = env
	spec.Name = cell.ServerInstance()
	return spec
}

// pinnedThreads is the engine thread count a CPU-pinned cell asks Ollama for
// (num_thread): one per core it may use. Ollama otherwise runs a thread per physical
// core of the machine, and threads beyond the cores allowed only wait on each other.
func pinnedThreads(cell *plan.Cell) int {
	if hw := cell.Hardware; hw != nil && cell.Backend.Kind == "ollama" {
		return len(hw.Pins.CPUSet)
	}
	return 0
}

// ollamaThreads is the thread count Ollama's runner logs it loaded a model with
// ("NumThreads:2" in the load request it logs).
var ollamaThreads = regexp.MustCompile(`NumThreads:(\d+)`)

// oversubscribed says, for a CPU-pinned cell, when the server's engine ran more threads
// than the cores it was allowed (cpusAllowed, as the row read them): the threads beyond
// them only wait on each other, so the row times that mismatch as much as the model.
// Ollama logs the count its runner loaded with; planrun sets it (num_thread) only
// through Ollama's native API, so a cell that speaks the OpenAI protocol to a pinned
// Ollama gets Ollama's default, a thread per physical core of the machine.
func oversubscribed(cell *plan.Cell, logPath, cpusAllowed string) string {
	if cell.Hardware == nil || len(cell.Hardware.Pins.CPUSet) == 0 || cpusAllowed == "" {
		return ""
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	m := ollamaThreads.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return ""
	}
	threads, _ := strconv.Atoi(string(m[len(m)-1][1])) // the newest load
	cores, err := plan.ParseCPUList(cpusAllowed)
	if err != nil || threads <= len(cores) {
		return ""
	}
	note := fmt.Sprintf("Ollama's runner ran %d threads on the %d core(s) it was allowed (%s): the threads beyond the cores wait on each other, so this row's timings are slower than the model's",
		threads, len(cores), cpusAllowed)
	if cell.Backend.Kind != "ollama" {
		note += fmt.Sprintf("; the %s protocol cannot set Ollama's num_thread, which planrun sets to the cores only through its native API", cell.Backend.Kind)
	}
	return note
}

// withNumThread is an Ollama backend's extra fields with options.num_thread = n, unless
// the plan sets it.
func withNumThread(extra map[string]any, n int) map[string]any {
	out := maps.Clone(extra)
	if out == nil {
		out = map[string]any{}
	}
	opts, _ := out["options"].(map[string]any)
	opts = maps.Clone(opts)
	if opts == nil {
		opts = map[string]any{}
	}
	if _, ok := opts["num_thread"]; !ok {
		opts["num_thread"] = n
	}
	out["options"] = opts
	return out
}

// backendConfig is the cell's backend configuration with num_thread for a CPU-pinned
// Ollama cell.
func backendConfig(cell *plan.Cell) backends.Config {
	cfg := cell.Backend.Config()
	if n := pinnedThreads(cell); n > 0 {
		cfg.ExtraFields = withNumThread(cfg.ExtraFields, n)
	}
	return cfg
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
