// Package proctest finds processes for the tests that check none is left behind: by what
// they mention (a test's unique directory), and whether a pid still exists. Only tests
// import it.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Mentioning lists the live (not zombie) processes whose working directory, command line
// or environment contains s: a test's unique temporary directory or port finds the
// processes it started, and no one else's. Linux only (it reads /proc).
func Mentioning(s string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	var pids []int
	for _, dir := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if pid == self || !alive(dir) {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		if bytes.Contains([]byte(cwd), []byte(s)) || bytes.Contains(cmdline, []byte(s)) || bytes.Contains(environ, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether /proc/PID/stat shows a state other than zombie or dead.
func alive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return false // exited while we looked
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+3 > len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}

// Describe is a process's command line, for a test's failure message.
func Describe(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strconv.Itoa(pid) + ": " + string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '}))
}
