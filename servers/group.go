package servers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GroupPIDs returns the processes of the server's process group, read now from /proc:
// the leader and its children, e.g. Ollama's runner, which exists only once a model is
// loaded and holds the GPU memory. Without /proc it is the leader alone.
func (p *Process) GroupPIDs() []int { return groupPIDs(p.pgid) }

func groupPIDs(pgid int) []int {
	pids := []int{pgid}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return pids
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the ")" that closes the command name: state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
