package executor

import (
	"os"
	"runtime"
	"sync"
)

// LevelProcs is the GOMAXPROCS a level runs with when the process has n: n + min(n, 4). A
// chunk's kernel receive stamp is exact only while its reader reads it before the next
// chunk of the stream comes (a read that takes several queued chunks gets one stamp, the
// newest one's). On a machine whose cores are shared (a server on the same cores, other
// work), the OS preempts the threads that run the client's processors, and the readers
// queued on a preempted one wait for it to come back; extra processors let another of the
// client's threads run them. Measured with `planrun selfbench` on 2 shared cores (4
// processors instead of 2): the TTFTs stamped late by more than the tolerance fell 2 to 28
// times at 500 to 2,000 streams (once not at all), for up to 26% more client CPU per token,
// and a server saturated on the same cores streamed up to 19% less at 2,000 streams
// (docs/performance.md). An idle processor costs nothing. The extra ones are capped
// at 4: only 2 cores were measured, and a preempted thread's readers need one spare
// thread, not twice a large machine's (a guess, not measured).
func LevelProcs(n int) int { return n + min(n, 4) }

// procs counts the levels running, so that levels that overlap (cells on several
// servers) raise GOMAXPROCS once and the last one out restores it.
var procs struct {
	mu      sync.Mutex
	running int
	saved   int
	// set and getenv are runtime.GOMAXPROCS and os.Getenv; tests replace them.
	set    func(int) int
	getenv func(string) string
}

func init() { procs.set, procs.getenv = runtime.GOMAXPROCS, os.Getenv }

// raiseProcs raises GOMAXPROCS to LevelProcs for a level and returns what restores
// it (once the last running level has ended). It leaves a GOMAXPROCS the user set in the
// environment alone.
func raiseProcs() (restore func()) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if procs.getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	if procs.running == 0 {
		procs.saved = procs.set(0)
		procs.set(LevelProcs(procs.saved))
	}
	procs.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			procs.mu.Lock()
			defer procs.mu.Unlock()
			if procs.running--; procs.running == 0 {
				procs.set(procs.saved)
			}
		})
	}
}
