// Package pins applies a cell's hardware pins (cpus, gpus) to what runs it: the server
// spec restricted to its CPU and GPU sets, the engine thread count a CPU-pinned Ollama
// is asked for, and the note a row gets when the engine ran more threads than its cores.
package pins

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
)

// Spec is the server spec restricted to the cell's hardware pins: its CPU set, the
// OpenMP binding vLLM's CPU build takes from VLLM_CPU_OMP_THREADS_BIND, and
// CUDA_VISIBLE_DEVICES. A pinned spec is named for its hardware, so the manager starts a
// server per CPU or GPU set rather than reusing one started on another.
func Spec(cell *plan.Cell, spec servers.Spec) servers.Spec {
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

// Threads is the engine thread count a CPU-pinned cell asks Ollama for
// (num_thread): one per core it may use. Ollama otherwise runs a thread per physical
// core of the machine, and threads beyond the cores allowed only wait on each other.
func Threads(cell *plan.Cell) int {
	if hw := cell.Hardware; hw != nil && cell.Backend.Kind == "ollama" {
		return len(hw.Pins.CPUSet)
	}
	return 0
}

// ollamaThreads is the thread count Ollama's runner logs it loaded a model with
// ("NumThreads:2" in the load request it logs).
var ollamaThreads = regexp.MustCompile(`NumThreads:(\d+)`)

// Oversubscribed says, for a CPU-pinned cell, when the server's engine ran more threads
// than the cores it was allowed (cpusAllowed, as the row read them): the threads beyond
// them only wait on each other, so the row times that mismatch as much as the model.
// Ollama logs the count its runner loaded with; planrun sets it (num_thread) only
// through Ollama's native API, so a cell that speaks the OpenAI protocol to a pinned
// Ollama gets Ollama's default, a thread per physical core of the machine.
func Oversubscribed(cell *plan.Cell, logPath, cpusAllowed string) string {
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

// WithNumThread is an Ollama backend's extra fields with options.num_thread = n, unless
// the plan sets it.
func WithNumThread(extra map[string]any, n int) map[string]any {
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

// BackendConfig is the cell's backend configuration with num_thread for a CPU-pinned
// Ollama cell.
func BackendConfig(cell *plan.Cell) backends.Config {
	cfg := cell.Backend.Config()
	if n := Threads(cell); n > 0 {
		cfg.ExtraFields = WithNumThread(cfg.ExtraFields, n)
	}
	return cfg
}
