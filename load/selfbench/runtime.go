package selfbench

import (
	"runtime/metrics"
	"time"
)

// runtimeNames are the Go runtime's counters a level reads of the client process.
var runtimeNames = []string{
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/gc/heap/allocs:objects",
	"/gc/heap/allocs:bytes",
}

// runtimeStats is a reading of runtimeNames, or the difference of two.
type runtimeStats struct {
	gcCycles       uint64
	gcCPU, assist  time.Duration
	allocs, allocB uint64
}

func readRuntime() runtimeStats {
	s := make([]metrics.Sample, len(runtimeNames))
	for i, n := range runtimeNames {
		s[i].Name = n
	}
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	f := func(i int) time.Duration {
		if s[i].Value.Kind() != metrics.KindFloat64 {
			return 0
		}
		return time.Duration(s[i].Value.Float64() * float64(time.Second))
	}
	return runtimeStats{gcCycles: u(0), gcCPU: f(1), assist: f(2), allocs: u(3), allocB: u(4)}
}

func (r runtimeStats) sub(o runtimeStats) runtimeStats {
	return runtimeStats{gcCycles: r.gcCycles - o.gcCycles, gcCPU: r.gcCPU - o.gcCPU, assist: r.assist - o.assist,
		allocs: r.allocs - o.allocs, allocB: r.allocB - o.allocB}
}
