package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Pins is what a hardware block restricts the servers planrun starts to: a CPU set
// (cpus = "0-3") and a GPU set (gpus = [0, 1]). Empty means unrestricted.
type Pins struct {
	// CPUs is the CPU list as written ("0-1"); CPUSet the cores it names, ascending.
	CPUs   string
	CPUSet []int
	// GPUs are NVML device indexes, in the order given.
	GPUs []int
	// CPURange and GPURange are where the attributes were written, for the errors of an
	// apply that finds the machine cannot satisfy them.
	CPURange, GPURange hcl.Range
}

// Pinned reports whether the hardware restricts its servers at all.
func (p Pins) Pinned() bool { return len(p.CPUSet) > 0 || len(p.GPUs) > 0 }

// ParseCPUList reads a Linux CPU list, as taskset -c and Cpus_allowed_list write it:
// "0", "0-3", "0,2-3". It returns the cores in ascending order, each once.
func ParseCPUList(s string) ([]int, error) {
	var set []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("%q is not a CPU or a range of CPUs (\"0\", \"0-3\")", part)
		}
		for c := a; c <= b; c++ {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	return slices.Compact(set), nil
}

// decodeHardwarePins reads a hardware block's cpus and gpus.
func (l *loader) decodeHardwarePins(attrs hcl.Attributes, ctx *hcl.EvalContext, h *Hardware) {
	if a := attrs["cpus"]; a != nil && l.decode(a, ctx, &h.Pins.CPUs) {
		h.Pins.CPURange = a.Expr.Range()
		set, err := ParseCPUList(h.Pins.CPUs)
		if err != nil {
			l.errorf(a.Expr.Range().Ptr(), "Invalid cpus",
				"cpus is a CPU list such as \"0\", \"0-3\" or \"0,2-3\": %s.", err)
		}
		h.Pins.CPUSet = set
	}
	if a := attrs["gpus"]; a != nil && l.decode(a, ctx, &h.Pins.GPUs) {
		h.Pins.GPURange = a.Expr.Range()
		seen := map[int]bool{}
		for _, g := range h.Pins.GPUs {
			if g < 0 || seen[g] {
				l.errorf(a.Expr.Range().Ptr(), "Invalid gpus", "gpus lists NVML device indexes, each once and none negative, such as [0, 1]; %d is not one.", g)
				break
			}
			seen[g] = true
		}
	}
	if h.Pins.Pinned() && h.Host != "" {
		l.errorf(attrs["host"].NameRange.Ptr(), "Conflicting placement",
			"cpus and gpus restrict the servers planrun starts on this machine; a hardware block with a host measures servers planrun does not start.")
	}
}

// ServerInstance names the server process a cell runs on: its server block's name, and
// for hardware that pins CPUs or GPUs the hardware's too ("ollama@cpu1"), since a server
// restricted to one set is not the one started on another. "" for a cell without a
// server block.
func (c *Cell) ServerInstance() string {
	if c.Server == nil {
		return ""
	}
	if c.Hardware != nil && c.Hardware.Pins.Pinned() {
		return c.Server.Name + "@" + c.Hardware.Name
	}
	return c.Server.Name
}
