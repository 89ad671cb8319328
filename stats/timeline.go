package stats

import (
	"container/heap"
	"math"
	"slices"
)

// A run's requests in flight are kept exactly, one span a request, up to the store's
// limit (ITLExactGaps requests); past it the spans are folded into a timeline: the
// run's time cut into buckets, each holding the request-nanoseconds (and a closed
// loop's idle slot-nanoseconds) that fell inside it, so memory stops growing with the
// requests. The mean in flight stays exact (the busy time is every request's whole
// span); the p99 and the most in flight are then those of each bucket's mean (a burst
// shorter than a bucket reads lower), and the held span's ends are cut at the buckets.
// Delivered.Resolution says which.

// timelineBuckets bounds a timeline's buckets: past it they double in width, two
// merged into one, so a soak of any length holds at most this many (about 24 MiB).
const timelineBuckets = 1 << 20

// timelineWidth is a timeline's first bucket width: 1 ms.
const timelineWidth int64 = 1e6

// timeline is the busy and idle time of a run in buckets of width ns from origin: each
// bucket's time is held as a sum (partial) plus a count of spans covering it whole
// (the running sum of cover, times width), so a span of any length costs O(1).
type timeline struct {
	origin, width int64
	busy, idle    bucketSums
	// last is each slot's last body end, to take its turnaround as its next request
	// comes (a slot's requests arrive in order: they are sent one after another).
	last map[int]int64
	// firsts keeps the run's earliest starts, as many as the closed loop has slots (the
	// ramp and the held span start at the slots-th); lastStart is the latest start.
	firsts    startHeap
	slots     int
	lastStart int64
	// firstSeen and lastEnd bound the run's window: first start to last body end.
	firstSeen, lastEnd int64
}

// bucketSums is one quantity over a timeline's buckets.
type bucketSums struct {
	partial []float64 // ns inside the bucket, of spans not covering it whole
	cover   []int32   // +1 where a span covers from this bucket whole, −1 where it stops
}

func (b *bucketSums) grow(n int) {
	for len(b.partial) < n {
		b.partial = append(b.partial, 0)
		b.cover = append(b.cover, 0)
	}
}

// values is each bucket's ns.
func (b *bucketSums) values(width int64) []float64 {
	out := make([]float64, len(b.partial))
	var n int64
	for i := range out {
		n += int64(b.cover[i])
		out[i] = b.partial[i] + float64(n*width)
	}
	return out
}

// set makes the buckets hold v, whole.
func (b *bucketSums) set(v []float64) {
	b.partial, b.cover = v, make([]int32, len(v))
}

func newTimeline(slots int) *timeline {
	return &timeline{width: timelineWidth, last: map[int]int64{}, slots: slots, origin: math.MinInt64}
}

// add counts one request of span [start, end) from slot (0: none), with its
// turnaround from the slot's last request into turn.
func (t *timeline) add(start, end int64, slot int, turn *valueStore) {
	if t.firstSeen == 0 || start < t.firstSeen {
		t.firstSeen = start
	}
	t.lastStart = max(t.lastStart, start)
	t.lastEnd = max(t.lastEnd, end)
	if t.slots > 0 {
		if t.firsts.Len() < t.slots {
			heap.Push(&t.firsts, start)
		} else if start < t.firsts[0] {
			t.firsts[0] = start
			heap.Fix(&t.firsts, 0)
		}
	}
	t.spread(&t.busy, start, max(end, start))
	if slot > 0 {
		if prev, ok := t.last[slot]; ok && start >= prev {
			turn.add(float64(start-prev) / 1e9)
			t.spread(&t.idle, prev, start)
		}
		t.last[slot] = end
	}
}

// spread adds [a, b) to the buckets it falls in.
func (t *timeline) spread(into *bucketSums, a, b int64) {
	if b <= a {
		return
	}
	if t.origin == math.MinInt64 {
		t.origin = a - a%t.width
	}
	if a < t.origin {
		t.prepend(a)
	}
	for (b-t.origin)/t.width >= timelineBuckets {
		t.coarsen()
	}
	ia, ib := (a-t.origin)/t.width, (b-t.origin)/t.width
	t.busy.grow(int(ib) + 2)
	t.idle.grow(int(ib) + 2)
	if ia == ib {
		into.partial[ia] += float64(b - a)
		return
	}
	into.partial[ia] += float64(t.origin + (ia+1)*t.width - a)
	into.partial[ib] += float64(b - (t.origin + ib*t.width))
	if ib > ia+1 {
		into.cover[ia+1]++
		into.cover[ib]--
	}
}

// prepend moves the origin back to take a span that starts before it.
func (t *timeline) prepend(a int64) {
	k := (t.origin - a + t.width - 1) / t.width
	for _, b := range []*bucketSums{&t.busy, &t.idle} {
		v := append(make([]float64, k), b.values(t.width)...)
		b.set(v)
	}
	t.origin -= k * t.width
	for int64(len(t.busy.partial)) >= timelineBuckets {
		t.coarsen()
	}
}

// coarsen doubles the buckets' width, each pair summed into one.
func (t *timeline) coarsen() {
	if t.origin%(2*t.width) != 0 { // keep the origin on the wider grid
		for _, b := range []*bucketSums{&t.busy, &t.idle} {
			b.set(append([]float64{0}, b.values(t.width)...))
		}
		t.origin -= t.width
	}
	for _, b := range []*bucketSums{&t.busy, &t.idle} {
		v := b.values(t.width)
		out := make([]float64, (len(v)+1)/2)
		for i, x := range v {
			out[i/2] += x
		}
		b.set(out)
	}
	t.width *= 2
}

// runLoad is what the timeline gives of the run: the time at each count in flight
// (each bucket's mean split between the counts either side, so the mean stays exact),
// the held span's busy and idle time at the buckets' resolution, and the ramp.
func (t *timeline) runLoad() runLoad {
	r := runLoad{ramp: math.NaN()}
	busy := t.busy.values(t.width)
	for i, ns := range busy {
		// The bucket's part of the window (first start to last end): its whole width
		// but at either end of the run.
		lo := max(t.origin+int64(i)*t.width, t.firstSeen)
		hi := min(t.origin+int64(i+1)*t.width, t.lastEnd)
		if hi <= lo {
			continue
		}
		d := hi - lo
		m := ns / float64(d)
		k := int(m)
		for len(r.hist) <= k+1 {
			r.hist = append(r.hist, 0)
		}
		up := int64(math.Round((m - float64(k)) * float64(d)))
		r.hist[k] += d - up
		r.hist[k+1] += up
	}
	if t.slots > 0 && t.firsts.Len() > 0 {
		starts := slices.Sorted(slices.Values(t.firsts))
		c := starts[len(starts)-1] // the slots-th start (or the last, with fewer)
		r.ramp = float64(c-t.firstSeen) / 1e9
		if t.firsts.Len() == t.slots && t.lastStart > c {
			idle := t.idle.values(t.width)
			r.heldBusy = t.within(busy, c, t.lastStart) / 1e9
			r.heldIdle = t.within(idle, c, t.lastStart) / 1e9
			r.heldSecs = float64(t.lastStart-c) / 1e9
		}
	}
	return r
}

// within is the ns of the buckets between from and to, a cut bucket in proportion.
func (t *timeline) within(v []float64, from, to int64) float64 {
	var sum float64
	for i, x := range v {
		lo := t.origin + int64(i)*t.width
		if ov := overlap(lo, lo+t.width, from, to); ov > 0 {
			sum += x * ov * 1e9 / float64(t.width)
		}
	}
	return sum
}

// startHeap is a max-heap of the earliest starts seen.
type startHeap []int64

func (h startHeap) Len() int           { return len(h) }
func (h startHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h startHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *startHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *startHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
