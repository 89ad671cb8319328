package plan

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// The sizes at which a matrix gets a note, and past which it is refused: expanding
// cells costs memory (about 450 bytes a cell: a million cells validate in about 0.45 GB
// and 4 s on this project's 2-core machine), and a plan that large is more likely a list
// written by mistake than a benchmark anyone will run.
const (
	largeMatrixCells = 10_000
	maxMatrixCells   = 5_000_000
)

// combinations is the number of combinations of the matrix's dimensions before excludes
// and includes, saturating at maxMatrixCells+1 so no product overflows.
func (m *Matrix) combinations() int {
	n := 1
	for _, k := range []int{len(m.Models), len(m.Quantizations), len(m.Tools), len(m.Hardware), len(m.Workloads)} {
		n *= k
		if n > maxMatrixCells {
			return maxMatrixCells + 1
		}
	}
	return n
}

// checkSize notes a large matrix, from its dimensions alone (nothing is expanded), and
// refuses one too large to expand; false when it is refused.
func checkSize(m *Matrix) (ok bool, diags hcl.Diagnostics) {
	n := m.combinations()
	if n < largeMatrixCells {
		return true, nil
	}
	var dims []string
	for _, d := range []struct {
		n    int
		name string
	}{{len(m.Models), "models"}, {len(m.Quantizations), "quantizations"}, {len(m.Tools), "tools"}, {len(m.Hardware), "hardware"}, {len(m.Workloads), "workloads"}} {
		if d.n > 1 {
			dims = append(dims, fmt.Sprintf("%d %s", d.n, d.name))
		}
	}
	if n > maxMatrixCells {
		return false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Matrix too large",
			Detail:  fmt.Sprintf("Matrix %q combines %s: more than %d cells, too many to expand. Split it, or check the lists for a mistake.", m.Name, strings.Join(dims, " × "), maxMatrixCells),
			Subject: m.DeclRange.Ptr()}}
	}
	levels := 0
	for _, w := range m.Workloads {
		levels += len(w.Levels())
	}
	rows := n / len(m.Workloads) * levels
	return true, hcl.Diagnostics{{
		Severity: hcl.DiagWarning, Summary: "Large matrix",
		Detail: fmt.Sprintf("Matrix %q combines %s: %d cells before excludes, %d result rows at their workloads' levels. Check that this is the run you mean: apply measures every one.",
			m.Name, strings.Join(dims, " × "), n, rows),
		Subject: m.DeclRange.Ptr(),
	}}
}
