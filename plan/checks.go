package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// cellChecks is the one list of checks over cells that need only the plan: what a
// backend kind takes (sessions, reasoning, embeddings), what a managed server's
// command line states against its cells, load agents, and the hardware's pins against
// the servers they restrict. Plan.Cells runs it for validate, plan and apply, and
// apply.Run runs it again over the cells it is given (CheckCells), so no check apply
// could make before sending, without the machine or a server, is apply's alone.
var cellChecks = []func([]*Cell) hcl.Diagnostics{
	checkSessionBackends,
	checkReasoningBackends,
	checkEmbeddingsBackends,
	checkServerCommands,
	checkAgentCells,
	checkBatchCells,
	checkPinsNeedServer,
	checkEnvOverridesPins,
	checkThreadsOverridePins,
}

// CheckCells runs every check of cellChecks over cells, in order.
func CheckCells(cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, check := range cellChecks {
		diags = append(diags, check(cells)...)
	}
	return diags
}

// checkPinsNeedServer refuses hardware pins on a cell without a managed server: pins
// restrict the server planrun starts, and without one they would restrict nothing
// while the rows said they had.
func checkPinsNeedServer(cells []*Cell) hcl.Diagnostics {
	f := newFindings()
	for _, c := range cells {
		hw := c.Hardware
		if hw == nil || !hw.Pins.Pinned() || c.Server != nil {
			continue
		}
		at, what := hw.Pins.CPURange, fmt.Sprintf("cpus = %q", hw.Pins.CPUs)
		if len(hw.Pins.CPUSet) == 0 {
			at, what = hw.Pins.GPURange, fmt.Sprintf("gpus = %v", hw.Pins.GPUs)
		}
		f.say(hcl.DiagError, at, "Pins without a server", fmt.Sprintf("backend %s", c.Backend.Addr),
			fmt.Sprintf(" has no server block, but hardware %q pins %s, which applies only to a server planrun starts: it would restrict nothing. Give the backend server = server.<name>, or drop the pins.", hw.Name, what))
	}
	return f.diags()
}

// pinEnv are the environment variables apply sets from a hardware block's pins, which
// a server's own env would silently win over.
var pinEnv = []struct {
	name, attr string
	value      func(Pins) string
}{
	{"CUDA_VISIBLE_DEVICES", "gpus", func(p Pins) string {
		ids := make([]string, len(p.GPUs))
		for i, g := range p.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		return strings.Join(ids, ",")
	}},
	{"VLLM_CPU_OMP_THREADS_BIND", "cpus", func(p Pins) string { return p.CPUs }},
}

// checkEnvOverridesPins refuses a server env entry that gives another value than the
// cell's hardware pins (CUDA_VISIBLE_DEVICES against gpus): apply keeps the server's
// own, so the server would run on devices the rows do not name.
func checkEnvOverridesPins(cells []*Cell) hcl.Diagnostics {
	f := newFindings()
	for _, c := range cells {
		hw, s := c.Hardware, c.Server
		if hw == nil || s == nil || !hw.Pins.Pinned() {
			continue
		}
		for _, e := range pinEnv {
			want := e.value(hw.Pins)
			got, set := s.Env[e.name]
			if want == "" || !set || got == want {
				continue
			}
			f.say(hcl.DiagError, envKeyRange(s, e.name), "Server env overrides the hardware's pins",
				fmt.Sprintf("hardware %q pins %s (%s=%s)", hw.Name, e.attr, e.name, want),
				fmt.Sprintf(", but server %q sets %s = %q itself, which wins: the server would run on other devices than its rows name. Drop %s from the env and let the hardware block pin it.", s.Name, e.name, got, e.name))
		}
	}
	return f.diags()
}

// envKeyRange is where a server's env gives key: the item of its map literal, or the
// env attribute when the map is computed.
func envKeyRange(s *Server, key string) hcl.Range {
	if s.envExpr == nil {
		return s.envAt
	}
	return *keyRange(s.envExpr, key)
}

// checkThreadsOverridePins warns when an Ollama backend's own options.num_thread
// differs from the cores its cell's hardware pins: apply sets one thread per pinned
// core only where the plan sets none, so the engine would run that many threads on the
// pinned cores, waiting on each other (or leaving cores idle).
func checkThreadsOverridePins(cells []*Cell) hcl.Diagnostics {
	f := newFindings()
	for _, c := range cells {
		hw, be := c.Hardware, c.Backend
		if hw == nil || be == nil || be.Kind != "ollama" || len(hw.Pins.CPUSet) == 0 || c.Server == nil {
			continue
		}
		opts, _ := be.ExtraFields["options"].(map[string]any)
		n, ok := opts["num_thread"].(float64)
		if !ok || int(n) == len(hw.Pins.CPUSet) {
			continue
		}
		f.say(hcl.DiagWarning, be.extraAt, "num_thread overrides the pinned cores",
			fmt.Sprintf("hardware %q pins %d core(s) (cpus = %q)", hw.Name, len(hw.Pins.CPUSet), hw.Pins.CPUs),
			fmt.Sprintf(", but backend %s sets options.num_thread = %g itself, which apply keeps: Ollama would run %g threads on them. Drop num_thread and apply sets one per pinned core.", be.Addr, n, n))
	}
	return f.diags()
}
