package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every script and make target that builds planrun goes through scripts/build-planrun.sh,
// which stamps the commit: `make compare-engines` once built it without, and history then
// showed a version change between runs of one checkout.
func TestPlanrunIsBuiltStamped(t *testing.T) {
	files, _ := filepath.Glob("../../scripts/*.sh")
	files = append(files, "../../Makefile")
	direct := regexp.MustCompile(`go (build|install)\b[^\n]*\./cmd/planrun`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "build-planrun.sh" {
			if !strings.Contains(string(b), "internal/version.Commit=") {
				t.Errorf("%s does not stamp the commit", f)
			}
			continue
		}
		if m := direct.Find(b); m != nil && !strings.Contains(string(m), "-o /dev/null") { // a compile check keeps no binary
			t.Errorf("%s builds planrun itself (%q): use scripts/build-planrun.sh, which stamps the commit", f, m)
		}
	}
}

// free-port.sh gives the port asked for when it is free and the next free one when it
// is taken, so the quickstart's plan gets the same port (and hash) on every run.
func TestFreePort(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("../../scripts/free-port.sh", args...).Output()
		if err != nil {
			t.Fatalf("free-port.sh %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	next := strconv.Itoa(taken + 1)
	if got := run(strconv.Itoa(taken)); got == strconv.Itoa(taken) {
		t.Errorf("free-port.sh %d gave the port a listener holds", taken)
	}
	// The port above a taken one, unless it is excepted or taken itself (another test's).
	if got := run(strconv.Itoa(taken)); got != next && portFree(next) {
		t.Errorf("free-port.sh %d = %s, want %s", taken, got, next)
	}
	if got := run(next); portFree(next) && got != next {
		t.Errorf("free-port.sh %s = %s, want the port itself, free", next, got)
	}
	if got := run(strconv.Itoa(taken), next); got == next || got == strconv.Itoa(taken) {
		t.Errorf("free-port.sh %d %s = %s: gave a taken or excepted port", taken, next, got)
	}
}

func portFree(port string) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return false
	}
	l.Close()
	return true
}
