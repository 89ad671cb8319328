package ledger

import (
	"fmt"
	"math"

	"github.com/planrun/planrun/stats"
)

// Inside is what happened inside a row's measured window beyond its per-request figures:
// its steady state, and who else used the server's cores.
type Inside struct {
	// SteadyOutputTokS and SteadyGoodputTokS are the output tokens/s over the level's
	// steady window alone (stats.Delivered's: a closed loop's span with every slot busy,
	// an open loop's with its rate held), beside OutputTokS over the whole window, whose
	// ramp and drain count as if the server were slow; the median across runs. NaN
	// without a steady window (no more requests than slots). SteadySeconds is the
	// window's length (the median run's).
	SteadyOutputTokS, SteadyGoodputTokS, SteadySeconds float64
	// SteadySliceCVPct is how even the steady window was: the coefficient of variation,
	// in %, of the output tok/s of its timeline's slices (timeline.csv), every run's
	// together; NaN without two steady slices.
	SteadySliceCVPct float64
	// ServerCPUPct and NeighbourCPUPct are the shares of the server's allowed cores
	// (CPUsAllowed; 100 = all of them, the whole window) that its own process tree and
	// other processes used, planrun's own client counted apart; NaN where planrun does
	// not know the server's processes (it did not start the server).
	ServerCPUPct, NeighbourCPUPct float64
	// Saturation is SaturationOver when an open loop's or replay's TTFT climbed or its
	// requests in flight grew through its sending span (stats.Saturation's test, in some
	// run): its load is above what the server serves, and its figures are of a queue
	// that had not settled; empty otherwise. TTFTSlope (seconds of TTFT per second) and
	// InFlightSlope (requests per second) are the slopes tested, the median across runs;
	// NaN for a closed loop.
	Saturation               string
	TTFTSlope, InFlightSlope float64
	// Contention is ContentionContended when NeighbourCPUPct is above the stated
	// threshold (procmem.ContendedAbove), ContentionQuiet below it, empty unmeasured.
	Contention string
	// ServerQueueMeanS is the mean time the window's requests waited in the server's
	// queue before it first scheduled them, by the server's own histogram (vLLM's
	// request_queue_time_seconds); NaN where the server exposes none. A closed loop past
	// the server's slots shows it here.
	ServerQueueMeanS float64
}

// SaturationOver marks an over-saturated row.
const SaturationOver = "over-saturated"

// Contention verdicts of a Row.
const (
	ContentionContended = "contended"
	ContentionQuiet     = "quiet"
)

func newInside() Inside {
	nan := math.NaN()
	return Inside{ServerCPUPct: nan, NeighbourCPUPct: nan, SteadyOutputTokS: nan, SteadyGoodputTokS: nan, SteadySeconds: nan,
		SteadySliceCVPct: nan, TTFTSlope: nan, InFlightSlope: nan, ServerQueueMeanS: nan}
}

// setSteady sets the row's steady-state figures from its level's runs.
func (r *Row) setSteady(s stats.Runs) {
	d := s.Median.Delivered
	r.SteadyOutputTokS, r.SteadyGoodputTokS, r.SteadySeconds = d.SteadyOutputTokS, d.SteadyGoodputTokS, d.SteadySeconds
	if len(s.PerRun) == 0 {
		r.SteadySeconds = math.NaN()
	}
}

// Unsettled says why a row's figures may not describe the server alone, as compare and
// the gates read it: "unstable" (its runs disagree by more than 30%) or "contended 45%"
// (other processes took that share of its cores); "" when neither.
func (r *Row) Unsettled() string {
	switch {
	case r.Contention == ContentionContended:
		return fmt.Sprintf("contended %.0f%%", r.NeighbourCPUPct)
	case r.Stability == "unstable":
		return "unstable"
	}
	return ""
}

// insideColumns are the window's columns, appended after the earlier formats' columns so
// older ledgers upgrade in place.
func insideColumns() []column {
	return []column{
		floatCol("steady_output_tok_s", 1, func(r *Row) *float64 { return &r.SteadyOutputTokS }),
		floatCol("steady_goodput_tok_s", 1, func(r *Row) *float64 { return &r.SteadyGoodputTokS }),
		floatCol("steady_s", 1, func(r *Row) *float64 { return &r.SteadySeconds }),
		floatCol("steady_slice_cv_pct", 1, func(r *Row) *float64 { return &r.SteadySliceCVPct }),
		strCol("saturation", func(r *Row) *string { return &r.Saturation }),
		floatCol("ttft_slope_s_per_s", 1, func(r *Row) *float64 { return &r.TTFTSlope }),
		floatCol("in_flight_slope_per_s", 1, func(r *Row) *float64 { return &r.InFlightSlope }),
		floatCol("server_cpu_pct", 1, func(r *Row) *float64 { return &r.ServerCPUPct }),
		floatCol("neighbour_cpu_pct", 1, func(r *Row) *float64 { return &r.NeighbourCPUPct }),
		strCol("contention", func(r *Row) *string { return &r.Contention }),
		floatCol("server_queue_mean_s", 1, func(r *Row) *float64 { return &r.ServerQueueMeanS }),
	}
}

// insideFields are result.* names for the window's figures.
var insideFields = []ResultField{
	numField("steady_output_tok_s", "tokens/s", "output throughput over the level's steady window (every slot busy, or the open loop's rate held)", 1,
		func(r *Row) float64 { return r.SteadyOutputTokS }),
	numField("steady_goodput_tok_s", "tokens/s", "output tokens/s of the requests meeting the slo over the steady window", 1,
		func(r *Row) float64 { return r.SteadyGoodputTokS }),
	numField("neighbour_cpu_pct", "%", "share of the server's allowed cores other processes used during the window (planrun's client apart)", 1,
		func(r *Row) float64 { return r.NeighbourCPUPct }),
	strField("saturation", "over-saturated when an open loop's TTFT climbed or its requests in flight grew through the run, else empty",
		func(r *Row) string { return r.Saturation }),
	strField("contention", "contended when other processes used more than 10% of the server's cores, quiet below, empty unmeasured",
		func(r *Row) string { return r.Contention }),
	numField("server_queue_mean_s", "s", "mean time the requests waited in the server's queue before it scheduled them (vLLM's request_queue_time_seconds)", 1,
		func(r *Row) float64 { return r.ServerQueueMeanS }),
}
