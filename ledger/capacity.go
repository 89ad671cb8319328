package ledger

import (
	"fmt"
	"strconv"
)

// Capacity is the answer of one cell's capacity search: the highest load level whose
// SLO attainment stayed at or above the target.
type Capacity struct {
	CellID string `json:"cell_id"`
	// Dimension is what was searched: "concurrency" or "request_rate".
	Dimension string `json:"dimension"`
	// Value is the capacity: the highest level that met the target (Bound CapacityFound
	// or CapacityAtLeast), or the lowest level measured, which missed it (CapacityBelow).
	Value      float64 `json:"value"`
	Bound      string  `json:"bound"`
	TargetPct  float64 `json:"target_attainment_pct"`
	Resolution float64 `json:"resolution"`
	// Levels is how many levels the search measured, the declared ones included.
	Levels int `json:"levels"`
	// ClientBoundAt is, with Bound CapacityClientBound, the lowest level whose fidelity
	// was client-bound: planrun's client, not the server, was the limit there, so the
	// search cannot say the server's capacity (Value is then the highest level below it
	// that met the target, 0 when none did).
	ClientBoundAt float64 `json:"client_bound_at,omitempty"`
	// ClientFidelity is, with Bound CapacityClientBound, that level's fidelity when it
	// was late (its sends, or its slots' turnaround, behind the timing asked) rather
	// than client-bound; empty for client-bound.
	ClientFidelity string `json:"client_fidelity,omitempty"`
}

// Bounds of a Capacity.
const (
	// CapacityFound: the level above Value, within the resolution, missed the target.
	CapacityFound = "found"
	// CapacityAtLeast: every declared level met the target; the capacity may be higher.
	CapacityAtLeast = "at_least"
	// CapacityBelow: the first level missed the target; the capacity is below Value.
	CapacityBelow = "below"
	// CapacityClientBound: the client, not the server, limited a level before any missed
	// the target: no capacity is reported, only where the client gave out.
	CapacityClientBound = "client_bound"
)

// String says the capacity in a line, e.g. "concurrency 10 at ≥ 95% SLO attainment
// (bisected to 1)".
func (c Capacity) String() string {
	v := c.Dimension + " " + strconv.FormatFloat(c.Value, 'f', -1, 64)
	at := fmt.Sprintf("%g%% SLO attainment", c.TargetPct)
	switch c.Bound {
	case CapacityAtLeast:
		return fmt.Sprintf("%s or more at ≥ %s (every declared level met it; declare higher levels to find the limit)", v, at)
	case CapacityBelow:
		return fmt.Sprintf("below %s at ≥ %s (the first level missed it)", v, at)
	case CapacityClientBound:
		cb := c.Dimension + " " + strconv.FormatFloat(c.ClientBoundAt, 'f', -1, 64)
		met := "no level below it met it"
		if c.Value > 0 {
			met = v + " met it"
		}
		if c.ClientFidelity == FidelityLate {
			return fmt.Sprintf("not found at ≥ %s: the client could not keep the load's timing at %s (fidelity late: a late level decides nothing), and %s; "+
				"run planrun on a quieter or bigger machine, or raise the workload's fidelity_lag_ms if that timing does not matter, to measure the server's capacity", at, cb, met)
		}
		return fmt.Sprintf("not found at ≥ %s: the client, not the server, was the limit at %s (fidelity client-bound), and %s; "+
			"run planrun on a bigger machine or lower the load per client to measure the server's capacity", at, cb, met)
	}
	return fmt.Sprintf("%s at ≥ %s (bisected to %g, %d levels measured)", v, at, c.Resolution, c.Levels)
}
