package procmem

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

// Proc is one live process as /proc/<pid>/stat shows it: its parent and its process group.
type Proc struct {
	PID, PPID, PGID int
}

// Processes lists the live processes (zombies left out); ok is false where there is no
// /proc to list them from.
func Processes() (procs []Proc, ok bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return nil, false
	}
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
		p := Proc{}
		p.PID, _ = strconv.Atoi(filepath.Base(filepath.Dir(path)))
		p.PPID, _ = strconv.Atoi(string(f[1]))
		p.PGID, _ = strconv.Atoi(string(f[2]))
		procs = append(procs, p)
	}
	return procs, true
}

// Descendants is roots and every process of procs below them, parents before their
// children: a server and the workers it forked (Ollama's runner, vLLM's engine core).
func Descendants(procs []Proc, roots []int) []int {
	children := map[int][]int{}
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p.PID)
	}
	seen := map[int]bool{}
	var out []int
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}

// Cmdline is the process's command line, its arguments joined by spaces ("" for a
// kernel thread or a process that ended).
func Cmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return string(bytes.TrimRight(bytes.ReplaceAll(b, []byte{0}, []byte{' '}), " "))
}

// Matching is the live processes whose command line match selects, with their
// descendants: what one name stands for on a host (a server and its workers). The
// processes in skip are left out, and not matched: an exporter whose own command line
// holds the pattern must not count itself.
func Matching(match *regexp.Regexp, skip ...int) []int {
	procs, ok := Processes()
	if !ok {
		return nil
	}
	var roots []int
	for _, p := range procs {
		if !slices.Contains(skip, p.PID) && match.MatchString(Cmdline(p.PID)) {
			roots = append(roots, p.PID)
		}
	}
	return slices.DeleteFunc(Descendants(procs, roots), func(pid int) bool { return slices.Contains(skip, pid) })
}
