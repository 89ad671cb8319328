package traffic

import (
	"time"

	"github.com/planrun/planrun/load/executor"
)

// peakDue finds the most requests due within any warmWindow of a schedule, fed its due
// times in order: the connections its busiest moment needs open, its peak rather than
// its mean, so a burst does not pay connection set-ups at its send times.
type peakDue struct {
	due  []time.Duration // the due times within warmWindow of the last
	peak int
}

func (p *peakDue) add(at time.Duration) {
	p.due = append(p.due, at)
	for len(p.due) > 0 && at-p.due[0] >= warmWindow {
		p.due = p.due[1:]
	}
	p.peak = max(p.peak, len(p.due))
}

// connections is how many connections to open ahead: the peak, at most maxWarm and the
// cap on requests in flight (0: none).
func (p *peakDue) connections(capInFlight int) int {
	n := min(p.peak, maxWarm)
	if capInFlight > 0 {
		n = min(n, capInFlight)
	}
	return n
}

// warmOpenLoop makes an open loop open connections ahead of each run by its schedule's
// peak need, as a replay does for its trace (window.level).
func warmOpenLoop(lv *executor.LevelSpec) {
	if lv.RequestRate <= 0 || lv.Trace != nil {
		return
	}
	var p peakDue
	for _, at := range executor.Schedule(lv.RequestRate, lv.Arrival, lv.Requests, lv.Seed) {
		p.add(at)
	}
	lv.WarmConnections = p.connections(lv.Concurrency)
}
