package procmem

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeProc is a /proc tree a test writes: per-CPU stat lines and processes' stat and
// status files.
type fakeProc struct {
	t    *testing.T
	root string
}

// cpus writes /proc/stat with each core's busy (user) and idle ticks.
func (f fakeProc) cpus(busyIdle ...[2]uint64) {
	var b strings.Builder
	b.WriteString("cpu  1 2 3 4 5 6 7 8 0 0\n")
	for i, bi := range busyIdle {
		// user nice system idle iowait irq softirq steal guest guest_nice: busy split over
		// user and system, idle over idle and iowait, as the kernel would count them.
		fmt.Fprintf(&b, "cpu%d %d 0 %d %d %d 0 0 0 0 0\n", i, bi[0]-bi[0]/2, bi[0]/2, bi[1]-bi[1]/3, bi[1]/3)
	}
	b.WriteString("intr 0\nctxt 0\n")
	f.write("stat", b.String())
}

// proc writes a process's stat (utime and stime, with a comm holding a space and a
// parenthesis) and its allowed CPUs.
func (f fakeProc) proc(pid int, ticks uint64, cpus string) {
	f.write(fmt.Sprintf("%d/stat", pid), fmt.Sprintf("%d (a (b) c) S 1 %d 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 100 0 0\n",
		pid, pid, ticks-ticks/4, ticks/4))
	f.write(fmt.Sprintf("%d/status", pid), "Name:\tx\nCpus_allowed_list:\t"+cpus+"\n")
}

func (f fakeProc) write(name, s string) {
	p := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func TestCPUShares(t *testing.T) {
	const server, runner, client = 10, 11, 20
	tests := []struct {
		name string
		// the server on core 1, the client on cores clientCPUs; core 1's busy and idle
		// ticks over the window; the server's and the client's ticks over it
		clientCPUs                    string
		busy, idle, srv, runner, clnt uint64
		wantServer, wantClient, want  float64
		contended                     bool
	}{
		{"quiet: the server alone", "0", 50, 50, 50, 0, 30, 50, 0, 0, false},
		{"a busy loop beside it", "0", 100, 0, 40, 0, 0, 40, 0, 60, true},
		{"the client shares the core, counted apart", "1", 80, 20, 50, 0, 25, 50, 25, 5, false},
		{"the client on both cores: half of it here", "0-1", 80, 20, 50, 0, 30, 50, 15, 15, true},
		{"a runner that joined the tree counts whole", "0", 90, 10, 40, 30, 0, 70, 0, 20, true},
		{"at the threshold, not above", "0", 60, 40, 50, 0, 0, 50, 0, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeProc{t, t.TempDir()}
			f.cpus([2]uint64{500, 500}, [2]uint64{1000, 1000})
			f.proc(server, 100, "1")
			f.proc(client, 7, tt.clientCPUs)
			tree := []int{server}
			s := startCPU(f.root, time.Hour, func() []int { return tree }, client)
			f.cpus([2]uint64{900, 600}, [2]uint64{1000 + tt.busy, 1000 + tt.idle})
			f.proc(server, 100+tt.srv, "1")
			f.proc(client, 7+tt.clnt, tt.clientCPUs)
			if tt.runner > 0 {
				f.proc(runner, tt.runner, "1")
				tree = []int{server, runner}
			}
			sum := s.Stop()
			if sum.Note != "" || sum.Cores != "1" || sum.N != 1 {
				t.Fatalf("summary %+v", sum)
			}
			if !same(sum.ServerPct, tt.wantServer) || !same(sum.ClientPct, tt.wantClient) || !same(sum.OthersPct, tt.want) {
				t.Errorf("server %.2f%% client %.2f%% others %.2f%%, want %v %v %v", sum.ServerPct, sum.ClientPct, sum.OthersPct,
					tt.wantServer, tt.wantClient, tt.want)
			}
			if sum.Contended() != tt.contended {
				t.Errorf("contended %v, want %v", sum.Contended(), tt.contended)
			}
			if len(sum.Series) != 1 || !same(sum.Series[0].Others, tt.want) || !same(sum.Series[0].ServerCores, tt.wantServer/100) {
				t.Errorf("series %+v, want one point as the window", sum.Series)
			}
		})
	}
}

func TestCPUUnavailable(t *testing.T) {
	f := fakeProc{t, t.TempDir()}
	f.cpus([2]uint64{1, 1})
	if s := startCPU(f.root, time.Hour, func() []int { return []int{42} }, 1).Stop(); !strings.Contains(s.Note, "not found") || s.Contended() {
		t.Errorf("no server process: %+v", s)
	}
	f.proc(42, 1, "3") // a core /proc/stat does not list
	if s := startCPU(f.root, time.Hour, func() []int { return []int{42} }, 1).Stop(); !strings.Contains(s.Note, "1 cores asked") {
		t.Errorf("a core missing from stat: %+v", s)
	}
}

func same(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
