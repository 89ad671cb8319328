package apply

import (
	"slices"
	"sort"
	"testing"
	"time"
)

// readSpans is the truth each of a request's arrival stamps is judged against: the span
// in which the mock wrote that delta (written[i], from the request's start), its end
// moved out to the end of the newest delta that shares its stamp, and for the last
// deltas to ended (the flush of the stream's end, which their read may have carried).
// The client stamps every event with the kernel's receive time of the read that
// delivered it, which is that of the read's newest bytes (docs/peers.md): a client off
// the CPU while several deltas arrive reads them at once and gives them all that stamp,
// and one stamp per read cannot say more. So load may move a stamp up to the newest
// write its own read carried, never later, and never before the delta's own write.
func readSpans(t *testing.T, id string, written []span, arrivals []time.Duration, ended time.Duration) []span {
	t.Helper()
	if len(arrivals) != len(written) || len(written) == 0 {
		t.Fatalf("%s: %d arrivals, the mock wrote %d deltas", id, len(arrivals), len(written))
	}
	out := slices.Clone(written)
	out[len(out)-1].hi = max(out[len(out)-1].hi, ended)
	for i := len(out) - 2; i >= 0; i-- {
		if arrivals[i] == arrivals[i+1] {
			out[i].hi = max(out[i].hi, out[i+1].hi)
		}
	}
	return out
}

// median is the middle of xs, or the mean of the two middle values (stats.Percentile's
// p50).
func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// readSpans widens a span only over deltas that share its stamp, and the last ones to
// the stream's end.
func TestReadSpans(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	written := []span{{ms(10), ms(11)}, {ms(20), ms(21)}, {ms(30), ms(31)}, {ms(40), ms(41)}}
	for _, c := range []struct {
		name     string
		arrivals []time.Duration
		ended    time.Duration
		want     []span
	}{
		{"one read each", []time.Duration{ms(11), ms(21), ms(31), ms(41)}, ms(41),
			written},
		{"first two in one read", []time.Duration{ms(21), ms(21), ms(31), ms(41)}, ms(41),
			[]span{{ms(10), ms(21)}, {ms(20), ms(21)}, {ms(30), ms(31)}, {ms(40), ms(41)}}},
		{"middle two in one read", []time.Duration{ms(11), ms(31), ms(31), ms(41)}, ms(41),
			[]span{{ms(10), ms(11)}, {ms(20), ms(31)}, {ms(30), ms(31)}, {ms(40), ms(41)}}},
		{"all in one read, the end after", []time.Duration{ms(50), ms(50), ms(50), ms(50)}, ms(50),
			[]span{{ms(10), ms(50)}, {ms(20), ms(50)}, {ms(30), ms(50)}, {ms(40), ms(50)}}},
		{"equal stamps apart do not join", []time.Duration{ms(21), ms(25), ms(21), ms(41)}, ms(41),
			written},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := readSpans(t, "r", written, c.arrivals, c.ended); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
