package servers

import "github.com/planrun/planrun/telemetry/procmem"

// GroupPIDs returns the processes of the server's process group, read now: the leader
// first, then its live children, e.g. Ollama's runner, which exists only once a model is
// loaded and holds the GPU memory.
func (p *Process) GroupPIDs() []int {
	pids := []int{p.pgid}
	for _, pid := range GroupMembers(p.pgid) {
		if pid != p.pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// GroupMembers lists the live (not zombie) processes in process group pgid. /proc gives
// exact PIDs on Linux; elsewhere, signal 0 tells only whether the group has any member,
// reported as pgid itself.
func GroupMembers(pgid int) []int {
	procs, ok := procmem.Processes()
	if !ok {
		if groupExists(pgid) {
			return []int{pgid}
		}
		return nil
	}
	var pids []int
	for _, p := range procs {
		if p.PGID == pgid {
			pids = append(pids, p.PID)
		}
	}
	return pids
}
