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
}

// Bounds of a Capacity.
const (
	// CapacityFound: the level above Value, within the resolution, missed the target.
	CapacityFound = "found"
	// CapacityAtLeast: every declared level met the target; the capacity may be higher.
	CapacityAtLeast = "at_least"
	// CapacityBelow: the first level missed the target; the capacity is below Value.
	CapacityBelow = "below"
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
	}
	return fmt.Sprintf("%s at ≥ %s (bisected to %g, %d levels measured)", v, at, c.Resolution, c.Levels)
}
