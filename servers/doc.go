// Package servers runs the LLM servers a plan manages: it starts a server's command in
// its own process group, waits until the server answers its readiness URL, runs the
// setup commands (e.g. `ollama create`), and stops the whole group again — with the
// plan's stop signal, a grace period, then SIGKILL — so that no process outlives planrun.
//
// apply uses one Manager across a run's cells: Acquire starts the server the next cell
// needs, reuses it while consecutive cells need the same one, and stops the previous one
// when another is needed. Close stops everything; call it both deferred and on interrupt:
//
//	mgr := servers.NewManager(servers.Options{})
//	defer mgr.Close()
//	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	for _, cell := range cells {
//		p, err := mgr.Acquire(ctx, spec) // returns promptly once ctx is canceled
//		...
//		select { case <-p.Exited(): /* fail the cell's remaining requests: server_died */ ... }
//	}
//
// Close may also be called from a signal goroutine while Acquire is running: it cancels
// the start in flight, waits for it, and stops every process before it returns.
//
// Servers run in their own process group, so a terminal's Ctrl-C reaches planrun only,
// and planrun decides the order of shutdown. The limits of "no orphan, ever":
//   - a process that calls setsid or setpgid itself leaves the group and cannot be found;
//   - if planrun is killed with SIGKILL, internal/procgroup kills the whole group: the
//     leader by Linux Pdeathsig, its children (Ollama's runners) by a watchdog process
//     that sees planrun's end of a pipe close; a SIGKILLed watchdog disarms this.
//
// On Linux, planrun makes itself a child subreaper (PR_SET_CHILD_SUBREAPER) when it starts
// its first server, so that the server's own children, once orphaned, are reparented to
// planrun and reaped here rather than left as zombies under an init that does not reap
// (containers commonly run such an init).
package servers
