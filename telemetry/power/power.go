// Package power measures the energy a machine draws through a benchmark's measured
// window, from the meter a hardware block's power { } names: NVML's GPUs, RAPL through
// Linux's powercap, a command that prints watts, or a Prometheus query.
//
// A meter is read at a fixed interval into a Trace of cumulative joules: an energy
// counter's own readings (NVML's total energy, RAPL's energy_uj, unwrapped), or watts
// integrated by trapezoids. The energy of any window inside the trace (a run's first
// request start to its last request end, the window its throughput is counted in) is
// read back from it by linear interpolation, so every run gets its own figure.
package power

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Methods say how a Trace's joules were obtained.
const (
	// MethodCounter: differences of the meter's own energy counter.
	MethodCounter = "energy counter"
	// MethodIntegral: power readings (watts) integrated over time by trapezoids.
	MethodIntegral = "power samples integrated"
)

// DefaultInterval is how often a meter is read when the plan states no interval.
const DefaultInterval = time.Second

// MinInterval is the shortest interval a plan may ask for: a command or a query per
// reading costs a process or a request, and meters rarely update faster.
const MinInterval = 10 * time.Millisecond

// Point is one reading: the energy drawn since the trace's first reading.
type Point struct {
	At     time.Time
	Joules float64
}

// Trace is a meter's readings over a measured window.
type Trace struct {
	// Source says which meter was read ("rapl package-0 (/sys/class/powercap)").
	Source string
	// Method is MethodCounter or MethodIntegral.
	Method string
	// Interval is the reading interval.
	Interval time.Duration
	// Note says why there is no energy figure; empty when the meter was read.
	Note   string
	Points []Point
	// Failed counts readings that failed; LastError is the last one's error.
	Failed    int
	LastError string
}

// Energy is the energy drawn between start and end, in joules, interpolating linearly
// between the readings around each end. ok is false when the readings do not cover the
// window (a failed first or last reading, or no meter).
func (t Trace) Energy(start, end time.Time) (joules float64, ok bool) {
	a, okA := t.at(start)
	b, okB := t.at(end)
	if !okA || !okB || end.Before(start) {
		return 0, false
	}
	return b - a, true
}

// at is the cumulative energy at instant x, interpolated.
func (t Trace) at(x time.Time) (float64, bool) {
	ps := t.Points
	if len(ps) == 0 || x.Before(ps[0].At) || x.After(ps[len(ps)-1].At) {
		return 0, false
	}
	i := sort.Search(len(ps), func(i int) bool { return !ps[i].At.Before(x) })
	if ps[i].At.Equal(x) || i == 0 {
		return ps[i].Joules, true
	}
	p, q := ps[i-1], ps[i]
	f := float64(x.Sub(p.At)) / float64(q.At.Sub(p.At))
	return p.Joules + f*(q.Joules-p.Joules), true
}

// A Source is one meter. Read returns its reading now: a cumulative energy in joules
// when Counter (a counter that wraps unwraps itself; only differences count), or the
// power in watts otherwise.
type Source interface {
	Read(ctx context.Context) (float64, error)
	Counter() bool
	// String names the meter for the row's energy_source.
	String() string
}

// Meter reads a Source every interval until Stop.
type Meter struct {
	src      Source
	interval time.Duration
	now      func() time.Time

	mu    sync.Mutex // guards trace between the loop and Stop
	trace Trace
	// lastW and haveW carry the previous power reading for the next trapezoid.
	lastW float64
	haveW bool
	// base is a counter's first reading, so the trace starts at zero joules.
	base     float64
	haveBase bool

	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

// Start reads src once now, then every interval (DefaultInterval when zero, never
// below MinInterval) until Stop.
func Start(ctx context.Context, src Source, interval time.Duration) *Meter {
	return start(ctx, src, interval, time.Now)
}

func start(ctx context.Context, src Source, interval time.Duration, now func() time.Time) *Meter {
	if interval <= 0 {
		interval = DefaultInterval
	}
	interval = max(interval, MinInterval)
	m := &Meter{src: src, interval: interval, now: now, done: make(chan struct{})}
	m.trace = Trace{Source: src.String(), Method: MethodIntegral, Interval: interval}
	if src.Counter() {
		m.trace.Method = MethodCounter
	}
	ctx, m.cancel = context.WithCancel(ctx)
	m.read(ctx)
	go m.loop(ctx)
	return m
}

func (m *Meter) loop(ctx context.Context) {
	defer close(m.done)
	tk := time.NewTicker(m.interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			m.read(ctx)
		}
	}
}

// read takes one reading and appends it to the trace. A reading is stamped when it
// returns: a command or a query reports the meter as it was when it answered.
func (m *Meter) read(ctx context.Context) {
	v, err := m.src.Read(ctx)
	at := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return // Stop cut a reading short (a command killed, a query cancelled): not the meter's failure
		}
		m.trace.Failed++
		m.trace.LastError = err.Error()
		return
	}
	switch {
	case m.src.Counter():
		if !m.haveBase {
			m.base, m.haveBase = v, true
		}
		m.trace.Points = append(m.trace.Points, Point{At: at, Joules: v - m.base})
	case !m.haveW:
		m.trace.Points = append(m.trace.Points, Point{At: at})
		m.lastW, m.haveW = v, true
	default:
		prev := m.trace.Points[len(m.trace.Points)-1]
		j := prev.Joules + at.Sub(prev.At).Seconds()*(m.lastW+v)/2
		m.trace.Points = append(m.trace.Points, Point{At: at, Joules: j})
		m.lastW = v
	}
}

// Stop ends the readings with a last one, so the trace covers everything before it,
// and returns the trace. Calling it again returns the same trace.
func (m *Meter) Stop() Trace {
	m.stopOnce.Do(func() {
		m.cancel()
		<-m.done
		m.read(context.Background())
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.trace.Points) < 2 {
			m.trace.Note = fmt.Sprintf("no energy: %s gave %d readings", m.trace.Source, len(m.trace.Points))
			if m.trace.LastError != "" {
				m.trace.Note += " (" + m.trace.LastError + ")"
			}
		}
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.trace
}

// Unavailable is the trace of a meter that could not be opened, saying why.
func Unavailable(source, why string) Trace {
	return Trace{Source: source, Note: "no energy: " + why}
}
