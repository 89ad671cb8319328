package backends

import "time"

// Clock is the timing core's only source of time. Production uses SystemClock (whose
// readings carry Go's monotonic clock, so offsets are immune to wall-clock steps);
// tests inject a clock they move by hand so TTFT and TPOT can be asserted exactly.
type Clock interface {
	Now() time.Time
}

// SystemClock reads time.Now.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }
