package ledger

import "strings"

// CellNames name each cell of rows as a person reads it: the parts of what produced
// the rows (model, quantization, tool, hardware, workload) that differ between the
// cells, joined by " · " ("q4_K_M · ollama.native"), so a reader sees what was varied
// and not the ids' repeated matrix and workload names. One cell is named by its model
// and quantization. Cells the parts cannot tell apart (two matrices over the same
// things) keep their ids. Keyed by CellID.
func CellNames(rows []Row) map[string]string {
	parts := func(r *Row) []string {
		return []string{r.Model, r.QuantShown(), r.Tool, r.Hardware, r.Workload}
	}
	var first []string
	varies := make([]bool, 5)
	seen := map[string]bool{}
	var cells []*Row
	for i := range rows {
		r := &rows[i]
		if seen[r.CellID] {
			continue
		}
		seen[r.CellID] = true
		cells = append(cells, r)
		p := parts(r)
		if first == nil {
			first = p
		}
		for j := range p {
			varies[j] = varies[j] || p[j] != first[j]
		}
	}
	if len(cells) == 1 {
		varies[0], varies[1] = true, true
	}
	names := map[string]string{}
	byName := map[string][]string{}
	for _, r := range cells {
		var kept []string
		for j, p := range parts(r) {
			if varies[j] && p != "" {
				kept = append(kept, p)
			}
		}
		n := strings.Join(kept, " · ")
		if n == "" {
			n = r.CellID
		}
		names[r.CellID] = n
		byName[n] = append(byName[n], r.CellID)
	}
	for _, ids := range byName {
		if len(ids) > 1 {
			for _, id := range ids {
				names[id] = id
			}
		}
	}
	return names
}
