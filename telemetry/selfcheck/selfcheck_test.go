package selfcheck

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestMonitorCountsCPUAndWakeUps(t *testing.T) {
	m := Start()
	// Burn some CPU, and wake goroutines, so the report has something to count.
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	done := make(chan int)
	for i := 0; i < 100; i++ {
		go func() { done <- i }()
		<-done
	}
	r := m.Stop()
	if r.CPU <= 0 || r.CPUPercent <= 0 {
		t.Fatalf("CPU not counted: %+v", r)
	}
	if r.Schedules == 0 || r.LagMax < r.LagP99 || r.LagP99 < r.LagP50 {
		t.Fatalf("wake-ups not counted or out of order: %+v", r)
	}
	_ = x
}

func TestQuantileFromBuckets(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-5, 1e-4, math.Inf(1)}
	counts := []uint64{90, 9, 1, 0}
	if q := quantile(buckets, counts, 100, 0.5); q != time.Microsecond {
		t.Fatalf("p50 = %v", q)
	}
	if q := quantile(buckets, counts, 100, 0.99); q != 10*time.Microsecond {
		t.Fatalf("p99 = %v", q)
	}
	if q := quantile(buckets, counts, 100, 1); q != 100*time.Microsecond {
		t.Fatalf("max = %v", q)
	}
}

func TestWarnings(t *testing.T) {
	quiet := Report{LagP50: time.Microsecond, LagP99: 100 * time.Microsecond, CPUPercent: 40, Cores: 2}
	if w := quiet.Warnings(2*time.Millisecond, 0); len(w) != 0 {
		t.Fatalf("no warning expected: %v", w)
	}
	tail := Report{LagP50: time.Microsecond, LagP99: 300 * time.Microsecond, CPUPercent: 40, Cores: 2}
	if w := tail.Warnings(2*time.Millisecond, 0); len(w) != 1 || !strings.Contains(w[0], "p99 300µs is above 10% of the mean TPOT 2ms") {
		t.Fatalf("tail warning: %q", w)
	}
	laggy := Report{LagP50: 300 * time.Microsecond, LagP99: time.Millisecond, CPUPercent: 195, Cores: 2}
	w := laggy.Warnings(20*time.Millisecond, 30*time.Millisecond)
	if len(w) != 3 || !strings.Contains(w[0], "p50 300µs is above 1% of the mean TPOT") || !strings.Contains(w[1], "saturated") || !strings.Contains(w[2], "late") {
		t.Fatalf("warnings: %q", w)
	}
	if w := laggy.Warnings(0, 0); len(w) != 1 {
		t.Fatalf("without a TPOT only the CPU check applies: %q", w)
	}
}

// A lag that is a share of a fast TPOT but below NoteFloor is noise, not a caveat; just
// above the floor it is one again.
func TestWarningsFloor(t *testing.T) {
	tpot := 2 * time.Millisecond // 1%: 20 µs, 10%: 200 µs
	small := Report{LagP50: 60 * time.Microsecond, LagP99: 90 * time.Microsecond, CPUPercent: 40, Cores: 2}
	if w := small.Warnings(tpot/10, 0); len(w) != 0 {
		t.Fatalf("a 60 µs lag on a 200 µs TPOT is under the floor, got %q", w)
	}
	over := Report{LagP50: 101 * time.Microsecond, CPUPercent: 40, Cores: 2} // just above NoteFloor
	if w := over.Warnings(tpot, 0); len(w) != 1 || !strings.Contains(w[0], "p50 101µs") {
		t.Fatalf("a lag just above the floor and 1%% of TPOT: %q", w)
	}
}

// Warnings print durations to 3 significant digits, not to the microsecond.
func TestReadable(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{25123456 * time.Nanosecond, "25.1ms"},
		{1234567891 * time.Nanosecond, "1.23s"},
		{850 * time.Microsecond, "850µs"},
		{12345 * time.Nanosecond, "12µs"},
		{-2345678 * time.Nanosecond, "-2.35ms"},
		{90 * time.Second, "1m30s"},
	} {
		if got := Readable(c.d).String(); got != c.want {
			t.Errorf("Readable(%v) = %s, want %s", c.d, got, c.want)
		}
	}
	w := Report{LagP50: 3456789 * time.Nanosecond}.Warnings(12345678*time.Nanosecond, 0)
	if len(w) != 1 || !strings.Contains(w[0], "p50 3.46ms is above 1% of the mean TPOT 12.3ms") {
		t.Errorf("warnings %q", w)
	}
}
