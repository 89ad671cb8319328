package fleet

import (
	"fmt"
	"time"

	"github.com/planrun/planrun/ledger"
)

// Clock offsets are measured as NTP measures them: the agent sends its time t1, the
// lead stamps the message's arrival t2 and its answer's departure t3, and the
// agent stamps the answer's arrival t4. With d the round trip less the lead's own
// time, (t4 − t1) − (t3 − t2), the agent's clock reads
//
//	offset = ((t1 − t2) + (t4 − t3)) / 2
//
// ahead of the lead's, and the true offset lies within d/2 of it, whatever the
// split of d between the two directions: that half round trip is the bound. Of K round
// trips the one of least delay is kept (a queue or a descheduled thread only adds
// delay), so the bound is the tightest the link allowed.

// Exchange is one round trip of the clock exchange, as wall-clock Unix nanoseconds
// (the monotonic clocks of two processes are not comparable).
type Exchange struct {
	T1 int64 `json:"t1"` // the agent sent its ping
	T2 int64 `json:"t2"` // the lead read it
	T3 int64 `json:"t3"` // the lead sent its pong
	T4 int64 `json:"t4"` // the agent read the pong
}

// Delay is the round trip less the lead's time between reading and answering.
func (e Exchange) Delay() time.Duration { return time.Duration((e.T4 - e.T1) - (e.T3 - e.T2)) }

// Offset is how far the agent's clock reads ahead of the lead's, by this round
// trip.
func (e Exchange) Offset() time.Duration { return time.Duration(((e.T1 - e.T2) + (e.T4 - e.T3)) / 2) }

// Estimate is an agent's clock against the lead's from K round trips.
type Estimate struct {
	// Offset is how far the agent's clock reads ahead of the lead's: an instant
	// the lead's clock reads T is T + Offset on the agent's.
	Offset time.Duration `json:"offset_ns"`
	// Bound is half the least round trip: the true offset lies within ±Bound of Offset.
	Bound time.Duration `json:"bound_ns"`
	// RoundTrips is K, the round trips the estimate was taken from.
	RoundTrips int `json:"round_trips"`
	// At is when it was taken, on the lead's clock.
	At time.Time `json:"at"`
}

// Estimate takes the round trip of least delay; ok is false without one (or with a
// negative delay, which only clocks stepped mid-exchange give).
func estimate(xs []Exchange) (Estimate, bool) {
	best := -1
	for i, x := range xs {
		if x.Delay() >= 0 && (best < 0 || x.Delay() < xs[best].Delay()) {
			best = i
		}
	}
	if best < 0 {
		return Estimate{}, false
	}
	x := xs[best]
	return Estimate{Offset: x.Offset(), Bound: x.Delay() / 2, RoundTrips: len(xs), At: time.Unix(0, x.T2)}, true
}

// ToAgent is the agent's reading of the lead's instant t.
func (e Estimate) ToAgent(t time.Time) time.Time { return t.Add(e.Offset) }

// ToLead is the lead's reading of the agent's instant t.
func (e Estimate) ToLead(t time.Time) time.Time { return t.Add(-e.Offset) }

func (e Estimate) String() string {
	return fmt.Sprintf("offset %s ± %s (least of %d round trips)", e.Offset, e.Bound, e.RoundTrips)
}

// record is the estimate as the manifest records it.
func (e Estimate) record() ledger.AgentClock {
	return ledger.AgentClock{Offset: e.Offset, Bound: e.Bound, RoundTrips: e.RoundTrips, At: e.At}
}
