package exporter

import (
	"context"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/telemetry/procmem"
)

func TestMain(m *testing.M) {
	if proctest.AllocatorMain() {
		return
	}
	os.Exit(m.Run())
}

func TestParseProcessExporter(t *testing.T) {
	f, err := os.Open("testdata/process-exporter.prom")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	groups, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]procmem.Reading{
		"ollama": {RSS: 133120000, PSS: 110000000, HasPSS: true, Processes: 2},
		"sshd":   {RSS: 7500000, Processes: 1},
	}
	if len(groups) != len(want) {
		t.Fatalf("groups: %+v", groups)
	}
	for name, w := range want {
		if groups[name] != w {
			t.Errorf("%s: %+v, want %+v", name, groups[name], w)
		}
	}
}

func TestParseRefusesOtherExporters(t *testing.T) {
	_, err := Parse(strings.NewReader("# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1024\n"))
	if err == nil || !strings.Contains(err.Error(), metricMemory) {
		t.Fatalf("want an error naming the missing gauge, got %v", err)
	}
}

func TestSelect(t *testing.T) {
	groups := map[string]procmem.Reading{"ollama": {RSS: 1, Processes: 2}, "sshd": {RSS: 1, Processes: 1}, "vllm": {}}
	for _, tc := range []struct{ group, err string }{
		{"", "serves 3 groups (ollama, sshd, vllm): name one with process_group"},
		{"olama", `no group "olama" (it serves ollama, sshd, vllm)`},
		{"vllm", `group "vllm" has no process on the host`},
		{"sshd", ""},
	} {
		_, err := Select(groups, tc.group)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Select(%q): %v, want %q", tc.group, err, tc.err)
		}
	}
	if r, err := Select(map[string]procmem.Reading{"only": {RSS: 5, Processes: 1}}, ""); err != nil || r.RSS != 5 {
		t.Errorf("the only group, unnamed: %+v %v", r, err)
	}
}

// The exporter, served over real TCP, reads what a real process tree on its host holds:
// a shell whose command line matches and the child below it that allocates a known
// amount during the window. Peak − baseline is within 5% of it.
func TestExporterMeasuresAChildOverHTTP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the exporter reads /proc, which only Linux has")
	}
	marker := "exporter-test-" + strconv.Itoa(os.Getpid())
	child := proctest.StartAllocator(t, "sh", "-c", `"$1" -test.run='^$'; :`, marker)
	url := serve(t, []Group{{Name: "alloc", Match: regexp.MustCompile(regexp.QuoteMeta(marker))}})

	s := procmem.StartFunc(100*time.Millisecond, Origin(url, "alloc"), Reader(nil, url, "alloc"))
	child.Allocate(t)
	sum := s.Stop()
	if sum.Note != "" || sum.Failures != 0 {
		t.Fatalf("summary: %+v", sum)
	}
	if sum.MaxProcesses != 2 {
		t.Errorf("%d processes, want the shell and the allocator below it", sum.MaxProcesses)
	}
	got := float64(sum.PeakRSS) - float64(sum.BaselineRSS)
	t.Logf("RSS through the exporter: peak − baseline = %.2f MiB for %d MiB allocated", got/(1<<20), proctest.AllocBytes>>20)
	if rel := math.Abs(got-proctest.AllocBytes) / proctest.AllocBytes; rel > 0.05 {
		t.Errorf("peak − baseline = %.1f MiB, want %d MiB within 5%% (off by %.1f%%)", got/(1<<20), proctest.AllocBytes>>20, 100*rel)
	}
	if _, err := os.Stat("/proc/self/smaps_rollup"); err == nil {
		if !sum.HasPSS || sum.Source != Origin(url, "alloc")+", PSS" {
			t.Errorf("smaps_rollup exists but the exporter served no PSS: source %q", sum.Source)
		}
	}
	if _, src := sum.Peak(); src != "process-exporter "+url+" group alloc, RSS" {
		t.Errorf("source %q", src)
	}
}

// An exporter that does not answer leaves a note with the reason, not a failure.
func TestUnreachableExporter(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/metrics"
	l.Close() // nothing listens there now
	sum := procmem.StartFunc(time.Hour, Origin(url, ""), Reader(nil, url, "")).Stop()
	if sum.Ticks != 0 || !strings.HasPrefix(sum.Note, "no process memory: process-exporter "+url+": ") || !strings.Contains(sum.Note, "refused") {
		t.Errorf("summary: %+v", sum)
	}
}

// serve runs Handler on a loopback port until the test ends and returns its /metrics URL.
func serve(t *testing.T, groups []Group) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(groups))
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return "http://" + l.Addr().String() + "/metrics"
}
