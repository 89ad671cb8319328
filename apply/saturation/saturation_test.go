package saturation

import (
	"strings"
	"testing"

	"github.com/planrun/planrun/stats"
)

// A run is first tested at its 24th finished request and stopped when that test says
// over-saturated; another run that never tests over stays open; a closed other Enough
// closes the joined one; and the note names the stopped run alone.
func TestWatchStopsAnOverSaturatedRun(t *testing.T) {
	over := map[int]bool{0: true}
	asked := 0
	w := NewWatch(func(run int) (stats.Summary, bool) {
		asked++
		var s stats.Summary
		s.Delivered.Saturation = &stats.Saturation{Over: over[run], Seconds: 3}
		return s, true
	})
	defer w.Stop()
	enough := w.Either(nil)
	stop0, stop1 := enough(0), enough(1)
	for i := 0; i < first-1; i++ {
		w.Add(0)
		w.Add(1)
	}
	if asked != 0 {
		t.Fatalf("tested %d times before the %dth request", asked, first)
	}
	select {
	case <-stop0:
		t.Fatal("run 1 stopped before it was tested")
	default:
	}
	w.Add(0)
	w.Add(1)
	select {
	case <-stop0:
	default:
		t.Fatal("run 1 tested over-saturated and was not stopped")
	}
	select {
	case <-stop1:
		t.Fatal("run 2 never tested over-saturated and was stopped")
	default:
	}
	if n := w.Note(); !strings.Contains(n, "run 1 after 24 requests (3.0 s of sending)") || strings.Contains(n, "run 2") {
		t.Errorf("note %q", n)
	}

	other := make(chan struct{})
	joined := w.Either(func(int) <-chan struct{} { return other })(1)
	close(other)
	<-joined // closes when the other Enough does; a hang here fails by the test timeout
}

// A nil watch (no stop_when_saturated) says nothing and stops nothing.
func TestNilWatch(t *testing.T) {
	var w *Watch
	w.Stop()
	if n := w.Note(); n != "" {
		t.Errorf("nil watch's note %q", n)
	}
}
