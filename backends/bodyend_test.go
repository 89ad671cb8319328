package backends

import (
	"testing"
	"time"
)

// stampAt is a receive-time source that reports one stamp.
type stampAt struct {
	t  time.Time
	ok bool
}

func (s stampAt) RxTime() (time.Time, bool) { return s.t, s.ok }

// The body ends at the kernel's stamp of its last read when that falls between the last
// chunk and now, both ends included; otherwise at now (never before the last chunk).
func TestBodyEnd(t *testing.T) {
	start := time.Unix(1000, 0)
	s := &Sample{Start: start, End: 10 * time.Millisecond}
	now := 30 * time.Millisecond
	at := func(d time.Duration) rxTimer { return stampAt{start.Add(d), true} }
	for _, c := range []struct {
		name string
		rx   rxTimer
		want time.Duration
	}{
		{"no stamps", nil, now},
		{"no stamp yet", stampAt{start.Add(20 * time.Millisecond), false}, now},
		{"between the last chunk and now", at(20 * time.Millisecond), 20 * time.Millisecond},
		{"at the last chunk", at(10 * time.Millisecond), 10 * time.Millisecond},
		{"at now", at(now), now},
		{"before the last chunk (an older read)", at(5 * time.Millisecond), now},
		{"after now", at(40 * time.Millisecond), now},
	} {
		if got := bodyEnd(c.rx, s, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Read before the last chunk's own stamp (a clock behind the kernel's): the last chunk.
	if got := bodyEnd(nil, s, 5*time.Millisecond); got != s.End {
		t.Errorf("now before the last chunk: %v, want the last chunk's %v", got, s.End)
	}
}
