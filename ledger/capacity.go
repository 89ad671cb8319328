package ledger

import (
	"fmt"
	"strconv"
	"strings"
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
	// Undecided are the levels measured whose SLO attainment interval straddles the
	// target: a point above or below it, but noise could be either. With any, the
	// answer is a range: RangeLo is the highest level whose whole interval met the
	// target (0: none), RangeHi the lowest whose whole interval missed it (0: none), and
	// the capacity lies between them as far as the levels' intervals can tell.
	Undecided []float64 `json:"undecided,omitempty"`
	RangeLo   float64   `json:"range_lo,omitempty"`
	RangeHi   float64   `json:"range_hi,omitempty"`
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
// (bisected to 1)", with the range when levels were undecided.
func (c Capacity) String() string {
	s := c.point()
	if len(c.Undecided) == 0 {
		return s
	}
	levels := make([]string, len(c.Undecided))
	for i, v := range c.Undecided {
		levels[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	lo, hi := "none", "none"
	if c.RangeLo > 0 {
		lo = strconv.FormatFloat(c.RangeLo, 'f', -1, 64)
	}
	if c.RangeHi > 0 {
		hi = strconv.FormatFloat(c.RangeHi, 'f', -1, 64)
	}
	return fmt.Sprintf("%s; undecided at %s %s (the attainment interval straddles %g%%): as a range, between %s (the highest level surely met) and %s (the lowest surely missed); more requests a level would narrow it",
		s, c.Dimension, strings.Join(levels, ", "), c.TargetPct, lo, hi)
}

// point is String without the range.
func (c Capacity) point() string {
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
