package ledger

import "testing"

// Capacity.String says each bound in its own words, levels written as the plan wrote
// them (10, not 10.0; 2.25 in full) and the target with %g.
func TestCapacityString(t *testing.T) {
	for _, c := range []struct {
		name string
		c    Capacity
		want string
	}{
		{"found", Capacity{Dimension: "concurrency", Value: 10, Bound: CapacityFound, TargetPct: 95, Resolution: 1, Levels: 6},
			"concurrency 10 at ≥ 95% SLO attainment (bisected to 1, 6 levels measured)"},
		{"found at a fractional rate", Capacity{Dimension: "request_rate", Value: 2.25, Bound: CapacityFound, TargetPct: 99.5, Resolution: 0.25, Levels: 7},
			"request_rate 2.25 at ≥ 99.5% SLO attainment (bisected to 0.25, 7 levels measured)"},
		{"at least", Capacity{Dimension: "concurrency", Value: 64, Bound: CapacityAtLeast, TargetPct: 95},
			"concurrency 64 or more at ≥ 95% SLO attainment (every declared level met it; declare higher levels to find the limit)"},
		{"below", Capacity{Dimension: "concurrency", Value: 1, Bound: CapacityBelow, TargetPct: 95},
			"below concurrency 1 at ≥ 95% SLO attainment (the first level missed it)"},
		{"client-bound, a level below met it", Capacity{Dimension: "concurrency", Value: 64, Bound: CapacityClientBound, TargetPct: 95, ClientBoundAt: 128},
			"not found at ≥ 95% SLO attainment: the client, not the server, was the limit at concurrency 128 (fidelity client-bound), " +
				"and concurrency 64 met it; run planrun on a bigger machine or lower the load per client to measure the server's capacity"},
		// Value 0 is "none met it", not a level 0 that met it.
		{"client-bound, none met it", Capacity{Dimension: "request_rate", Value: 0, Bound: CapacityClientBound, TargetPct: 90, ClientBoundAt: 200},
			"not found at ≥ 90% SLO attainment: the client, not the server, was the limit at request_rate 200 (fidelity client-bound), " +
				"and no level below it met it; run planrun on a bigger machine or lower the load per client to measure the server's capacity"},
		{"late", Capacity{Dimension: "request_rate", Value: 4, Bound: CapacityClientBound, TargetPct: 90, ClientBoundAt: 8, ClientFidelity: FidelityLate},
			"not found at ≥ 90% SLO attainment: the client could not keep the load's timing at request_rate 8 (fidelity late: a late level decides nothing), " +
				"and request_rate 4 met it; run planrun on a quieter or bigger machine, or raise the workload's fidelity_lag_ms if that timing does not matter, to measure the server's capacity"},
	} {
		if got := c.c.String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
