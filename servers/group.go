package servers

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

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
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		if groupExists(pgid) {
			return []int{pgid}
		}
		return nil
	}
	var pids []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited while we looked
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		if pg, _ := strconv.Atoi(string(f[2])); pg == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			pids = append(pids, pid)
		}
	}
	return pids
}
