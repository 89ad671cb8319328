package executor

import (
	"context"
	"testing"

	"github.com/planrun/planrun/backends"
)

// fakeProcs replaces runtime.GOMAXPROCS and os.Getenv for one test: it starts at 2
// processors and records every change.
type fakeProcs struct {
	n       int
	changes []int
	env     string
}

func useFakeProcs(t *testing.T, env string) *fakeProcs {
	f := &fakeProcs{n: 2, env: env}
	set, getenv := procs.set, procs.getenv
	procs.set = func(n int) int {
		prev := f.n
		if n > 0 {
			f.n = n
			f.changes = append(f.changes, n)
		}
		return prev
	}
	procs.getenv = func(k string) string {
		if k == "GOMAXPROCS" {
			return f.env
		}
		return ""
	}
	t.Cleanup(func() { procs.set, procs.getenv = set, getenv })
	return f
}

// procsBackend records the GOMAXPROCS its requests ran under.
type procsBackend struct {
	fakeBackend
	procs *fakeProcs
	seen  []int
}

func (b *procsBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	b.mu.Lock()
	b.seen = append(b.seen, b.procs.n)
	b.mu.Unlock()
	return b.fakeBackend.Do(ctx, req)
}

// TestRunLevelRaisesProcs: a level's requests run with twice the processors, and the
// setting is back once the level is over.
func TestRunLevelRaisesProcs(t *testing.T) {
	f := useFakeProcs(t, "")
	b := &procsBackend{procs: f}
	RunLevel(context.Background(), b, LevelSpec{Concurrency: 2, Requests: 4, RepeatRuns: 1, Prompts: &Prompts{Words: 3}}, Options{})
	if len(b.seen) != 4 {
		t.Fatalf("%d requests", len(b.seen))
	}
	for _, n := range b.seen {
		if n != 4 {
			t.Errorf("a request ran with GOMAXPROCS %d, want 4", n)
		}
	}
	if f.n != 2 || len(f.changes) != 2 {
		t.Errorf("after the level GOMAXPROCS is %d (changes %v), want 2 restored", f.n, f.changes)
	}
}

// TestRaiseProcsOverlap: levels that overlap raise once; the last one out restores, and
// a restore called twice counts once.
func TestRaiseProcsOverlap(t *testing.T) {
	f := useFakeProcs(t, "")
	r1 := raiseProcs()
	r2 := raiseProcs()
	if f.n != 4 || len(f.changes) != 1 {
		t.Fatalf("two levels: GOMAXPROCS %d, changes %v", f.n, f.changes)
	}
	r1()
	r1()
	if f.n != 4 {
		t.Fatalf("one level still running, GOMAXPROCS %d", f.n)
	}
	r2()
	if f.n != 2 || len(f.changes) != 2 {
		t.Errorf("both ended: GOMAXPROCS %d, changes %v", f.n, f.changes)
	}
}

// TestRaiseProcsUserSetting: a GOMAXPROCS the user set in the environment is kept.
func TestRaiseProcsUserSetting(t *testing.T) {
	f := useFakeProcs(t, "3")
	raiseProcs()()
	if len(f.changes) != 0 {
		t.Errorf("GOMAXPROCS=3 in the environment, yet it was changed: %v", f.changes)
	}
}

func TestLevelProcs(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 2}, {2, 4}, {4, 8}, {16, 20}, {64, 68}} {
		if got := LevelProcs(tc.n); got != tc.want {
			t.Errorf("LevelProcs(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}
