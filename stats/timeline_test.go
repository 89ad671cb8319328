package stats

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// closedLoopRun is a closed loop of slots slots sending n requests of 2–40 ms each,
// each slot's next one after a turnaround of 0.1–3 ms, fed to a in finish order (as the
// executor's drain and an agent's stream hand them over).
func closedLoopRun(a *Accumulator, slots, n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Unix(1000, 0)
	next := make([]time.Duration, slots) // each slot's next start
	type req struct {
		s   backends.Sample
		end time.Duration
	}
	var reqs []req
	for i := range n {
		k := i % slots
		if i < slots {
			next[k] = time.Duration(k) * 300 * time.Microsecond // a ramp
		}
		d := time.Duration(2e6 + rng.IntN(38e6))
		s := backends.Sample{Start: t0.Add(next[k]), End: d, BodyEnd: d, Slot: k + 1, FirstToken: d / 2, OutputTokens: 2, Chunks: 2}
		reqs = append(reqs, req{s, next[k] + d})
		next[k] += d + time.Duration(1e5+rng.IntN(29e5))
	}
	// In order of their ends: a slot's requests stay in order.
	for len(reqs) > 0 {
		best := 0
		for i := range reqs {
			if reqs[i].end < reqs[best].end {
				best = i
			}
		}
		a.addSample(&reqs[best].s)
		reqs = append(reqs[:best], reqs[best+1:]...)
	}
}

// Past its limit a run's load folds into a timeline: the mean in flight, the ramp and
// the turnarounds stay exact; the held mean and idle are within the buckets'
// resolution; the p99 and the most in flight are the buckets' (never above the exact
// ones), and the figures say their resolution.
func TestTimelineKeepsTheDeliveredLoad(t *testing.T) {
	const slots, n = 8, 3000
	exact, folded := NewAccumulator(Target{Concurrency: slots}), NewAccumulator(Target{Concurrency: slots})
	folded.load.limit = 500
	closedLoopRun(exact, slots, n, 3)
	closedLoopRun(folded, slots, n, 3)
	if folded.load.tl == nil || exact.load.tl != nil {
		t.Fatal("the limit did not fold the one store, or folded the other")
	}
	e, f := exact.Summary(Window{}).Delivered, folded.Summary(Window{}).Delivered
	t.Logf("exact:  mean %.6f p99 %v max %v held %.6f idle %.6f ramp %v turnaround p50 %v", e.InFlightMean, e.InFlightP99, e.InFlightMax, e.InFlightHeld, e.IdleHeld, e.RampSeconds, e.Turnaround.P50)
	t.Logf("folded: mean %.6f p99 %v max %v held %.6f idle %.6f ramp %v turnaround p50 %v, resolution %v s", f.InFlightMean, f.InFlightP99, f.InFlightMax, f.InFlightHeld, f.IdleHeld, f.RampSeconds, f.Turnaround.P50, f.Resolution)
	if e.Resolution != 0 || f.Resolution != 0.001 {
		t.Errorf("resolutions %v and %v, want 0 and 1 ms", e.Resolution, f.Resolution)
	}
	if !closeTo(f.InFlightMean, e.InFlightMean, 1e-9) || f.RampSeconds != e.RampSeconds || f.HeldSeconds != e.HeldSeconds {
		t.Errorf("mean %v / %v, ramp %v / %v, held span %v / %v: not exact", f.InFlightMean, e.InFlightMean, f.RampSeconds, e.RampSeconds, f.HeldSeconds, e.HeldSeconds)
	}
	if f.Turnaround.N != e.Turnaround.N || f.Turnaround.P50 != e.Turnaround.P50 || f.Turnaround.P99 != e.Turnaround.P99 {
		t.Errorf("turnarounds %+v, exact %+v", f.Turnaround, e.Turnaround)
	}
	// Each end of the held span is cut at a bucket: at most 2 ms of slots × 8 slots.
	tol := 2 * 0.001 * slots / e.HeldSeconds
	if math.Abs(f.InFlightHeld-e.InFlightHeld) > tol || math.Abs(f.IdleHeld-e.IdleHeld) > tol {
		t.Errorf("held %v / %v, idle %v / %v: beyond %v", f.InFlightHeld, e.InFlightHeld, f.IdleHeld, e.IdleHeld, tol)
	}
	if f.InFlightMax > e.InFlightMax || f.InFlightP99 > e.InFlightP99 || float64(f.InFlightMax) < float64(e.InFlightMax)-2 {
		t.Errorf("max %v / %v, p99 %v / %v", f.InFlightMax, e.InFlightMax, f.InFlightP99, e.InFlightP99)
	}
	// Pooled over runs, the timeline's resolution carries.
	r := SummarizeRuns([]MeasuredRun{{Acc: folded}, {Acc: exact}}, Target{Concurrency: slots})
	if r.Pooled.Delivered.Resolution != 0.001 || !closeTo(r.Pooled.Delivered.InFlightMean, e.InFlightMean, 1e-9) {
		t.Errorf("pooled: resolution %v, mean %v", r.Pooled.Delivered.Resolution, r.Pooled.Delivered.InFlightMean)
	}
}

// A soak longer than the timeline's buckets coarsens them instead of growing: the
// memory stays bounded, the mean exact.
func TestTimelineCoarsens(t *testing.T) {
	tl := newTimeline(0)
	var turn valueStore
	var busy float64
	for i := range 3000 {
		start := int64(i) * 1e9 // one request a second, for 3000 s: 3M buckets of 1 ms
		tl.add(start, start+5e8, 0, &turn)
		busy += 5e8
	}
	if tl.width != 4*timelineWidth || len(tl.busy.partial) > timelineBuckets {
		t.Fatalf("width %v ns, %d buckets", tl.width, len(tl.busy.partial))
	}
	var sum float64
	for _, v := range tl.busy.values(tl.width) {
		sum += v
	}
	if sum != busy {
		t.Errorf("busy %v ns in the buckets, want %v", sum, busy)
	}
	// A span before the origin moves it back.
	tl.add(-5e9, -4e9, 0, &turn)
	if tl.origin > -5e9 {
		t.Errorf("origin %v after a span at −5 s", tl.origin)
	}
}

func closeTo(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }
