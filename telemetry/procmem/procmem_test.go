package procmem

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
)

// TestMain lets the test binary be the child that allocates a known amount.
func TestMain(m *testing.M) {
	if proctest.AllocatorMain() {
		return
	}
	os.Exit(m.Run())
}

const allocBytes = proctest.AllocBytes

func TestSamplerMeasuresWhatAChildAllocates(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process memory is read from /proc, which only Linux has")
	}
	child := proctest.StartAllocator(t)
	pid := child.Cmd.Process.Pid
	s := Start(0, func() []int { return []int{pid} })
	child.Allocate(t)
	sum := s.Stop()
	if sum.Note != "" {
		t.Fatal(sum.Note)
	}
	if sum.MaxProcesses != 1 || sum.Ticks < 2 {
		t.Errorf("processes %d, ticks %d: want 1 process read at least twice (start and stop)", sum.MaxProcesses, sum.Ticks)
	}
	check := func(name string, base, peak uint64) {
		t.Helper()
		got := float64(peak) - float64(base)
		t.Logf("%s: peak − baseline = %.2f MiB for %d MiB allocated", name, got/(1<<20), allocBytes>>20)
		if rel := math.Abs(got-allocBytes) / allocBytes; rel > 0.05 {
			t.Errorf("%s: peak %d − baseline %d = %.1f MiB, want %d MiB within 5%% (off by %.1f%%)",
				name, peak, base, got/(1<<20), allocBytes>>20, 100*rel)
		}
	}
	check("RSS", sum.BaselineRSS, sum.PeakRSS)
	if _, err := os.Stat("/proc/self/smaps_rollup"); err == nil {
		if !sum.HasPSS || sum.Source != SourcePSS {
			t.Errorf("smaps_rollup exists but the summary has no PSS (source %q)", sum.Source)
		}
		check("PSS", sum.BaselinePSS, sum.PeakPSS)
	}
	if peak, src := sum.Peak(); peak < allocBytes || src != SourceRSS {
		t.Errorf("peak %d is below what the child holds (%d)", peak, allocBytes)
	}
}

func TestReadSkipsExitedProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process memory is read from /proc, which only Linux has")
	}
	self := Read([]int{os.Getpid()})
	if self.Processes != 1 || self.RSS == 0 {
		t.Fatalf("reading this process: %+v", self)
	}
	// PID 0 never names a process in /proc.
	both := Read([]int{os.Getpid(), 0})
	if both.Processes != 1 {
		t.Errorf("a missing PID was counted: %+v", both)
	}
	if s := Start(0, func() []int { return []int{0} }).Stop(); s.Note == "" {
		t.Errorf("a sampler of no live process gave no note: %+v", s)
	}
}

func TestKBField(t *testing.T) {
	b := []byte("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n")
	for _, tc := range []struct {
		key  string
		want uint64
		ok   bool
	}{{"VmRSS:", 1024 * 1024, true}, {"VmHWM:", 2048 * 1024, true}, {"Pss:", 0, false}} {
		got, ok := kBField(b, tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %d %v, want %d %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCPUsAllowed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Cpus_allowed_list is in Linux's /proc")
	}
	list, cores, err := CPUsAllowed(os.Getpid())
	if err != nil || list == "" || len(cores) == 0 {
		t.Fatalf("%q %v %v", list, cores, err)
	}
	if got, _ := parseCPUList("0-2,5"); fmt.Sprint(got) != "[0 1 2 5]" {
		t.Errorf("parseCPUList: %v", got)
	}
}

// Matching finds the processes whose command line matches and those below them, never
// a process it is told to skip (an exporter whose own command line holds the pattern):
// with the shell skipped, the allocator below it is no longer under a match.
func TestMatchingFindsTheTreeBelowAMatch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes are listed from /proc, which only Linux has")
	}
	marker := "procmem-match-" + strconv.Itoa(os.Getpid())
	child := proctest.StartAllocator(t, "sh", "-c", `"$1" -test.run='^$'; :`, marker)
	sh := child.Cmd.Process.Pid
	got := Matching(regexp.MustCompile(regexp.QuoteMeta(marker)))
	if len(got) != 2 || got[0] != sh {
		t.Fatalf("Matching(%s) = %v, want the shell %d first and the allocator below it", marker, got, sh)
	}
	if !strings.Contains(Cmdline(sh), marker) || strings.Contains(Cmdline(got[1]), marker) {
		t.Errorf("command lines: %q, %q", Cmdline(sh), Cmdline(got[1]))
	}
	if skipped := Matching(regexp.MustCompile(regexp.QuoteMeta(marker)), sh); len(skipped) != 0 {
		t.Errorf("with the shell skipped, Matching = %v, want nothing (the allocator does not match)", skipped)
	}
	procs, _ := Processes()
	if tree := Descendants(procs, []int{os.Getpid()}); !slices.Contains(tree, sh) || !slices.Contains(tree, got[1]) {
		t.Errorf("Descendants of this test %v miss its child %d or grandchild %d", tree, sh, got[1])
	}
}

// A sampler of readings taken elsewhere counts failed readings and goes on: a first
// reading that failed leaves the baseline to the first that answered, and says so; one
// that never answered leaves a note naming the origin and the error.
func TestStartFuncCountsFailures(t *testing.T) {
	var n int
	readings := []error{errors.New("connection refused"), nil, nil}
	read := func(ctx context.Context) (Reading, error) {
		i := min(n, len(readings)-1)
		n++
		if readings[i] != nil {
			return Reading{}, readings[i]
		}
		return Reading{RSS: uint64(100 * n), Processes: 2}, nil
	}
	s := StartFunc(time.Hour, "process-exporter http://h:9256/metrics", read).Stop()
	if s.Note != "" || s.Failures != 1 || !s.BaselineLate || s.Ticks != 1 || s.BaselineRSS != 200 || s.PeakRSS != 200 {
		t.Fatalf("summary: %+v", s)
	}
	if peak, src := s.Peak(); peak != 200 || src != "process-exporter http://h:9256/metrics, RSS" {
		t.Errorf("Peak() = %d %q", peak, src)
	}
	never := StartFunc(time.Hour, "process-exporter http://h:9256/metrics", func(context.Context) (Reading, error) {
		return Reading{}, errors.New("connection refused")
	}).Stop()
	if never.Ticks != 0 || never.Failures != 2 || never.Note != "no process memory: process-exporter http://h:9256/metrics: connection refused" {
		t.Errorf("an exporter that never answered: %+v", never)
	}
}
