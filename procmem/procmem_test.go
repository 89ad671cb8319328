package procmem

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// allocBytes is what the helper child allocates once told to: large beside the Go
// runtime's own few MB, so 5% of it is a real bound.
const allocBytes = 96 << 20

var held []byte

// TestMain lets the test binary be the child that allocates a known amount.
func TestMain(m *testing.M) {
	if os.Getenv("PROCMEM_HELPER") == "1" {
		helper()
		return
	}
	os.Exit(m.Run())
}

// helper says "ready", waits for a line, allocates allocBytes and touches every page so
// it is resident, says "done", and holds the memory until stdin closes.
func helper() {
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		os.Exit(1)
	}
	held = make([]byte, allocBytes)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	fmt.Println("done")
	io.Copy(io.Discard, in)
	runtime.KeepAlive(held)
}

func TestSamplerMeasuresWhatAChildAllocates(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process memory is read from /proc, which only Linux has")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCMEM_HELPER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	out := bufio.NewReader(stdout)
	expect := func(want string) {
		t.Helper()
		line, err := out.ReadString('\n')
		if err != nil || line != want+"\n" {
			t.Fatalf("child said %q (%v), want %q", line, err, want)
		}
	}
	expect("ready")
	pid := cmd.Process.Pid
	s := Start(0, func() []int { return []int{pid} })
	fmt.Fprintln(stdin, "go")
	expect("done")
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
