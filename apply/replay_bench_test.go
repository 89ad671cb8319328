//go:build unix

package apply

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// BenchmarkReplayLargeTrace replays a generated 1 GB Mooncake trace (about 10 million
// rows, one every 3 ms of trace time) through apply against an in-process mock: the
// validating pass reads the whole file, and the replay streams a window of it (150 s of
// trace time, 50 000 rows, at speedup 50, at most 64 in flight). It reports the
// process's peak RSS, which should stay flat: nothing holds the trace.
// PLANRUN_REPLAY_BENCH_MB sets a smaller file; PLANRUN_REPLAY_BENCH_WINDOW the window.
func BenchmarkReplayLargeTrace(b *testing.B) {
	mb, window := int64(1024), "150s"
	if s := os.Getenv("PLANRUN_REPLAY_BENCH_MB"); s != "" {
		fmt.Sscan(s, &mb)
	}
	if s := os.Getenv("PLANRUN_REPLAY_BENCH_WINDOW"); s != "" {
		window = s
	}
	dir := b.TempDir()
	writeLargeTrace(b, filepath.Join(dir, "trace.jsonl"), mb<<20)
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	src := strings.NewReplacer("speedup = 10", "speedup = 50\n    duration = \""+window+"\"",
		"temperature = 0", "temperature = 0\n  concurrency = 64").Replace(replayPlan)
	os.WriteFile(filepath.Join(dir, "plan.hcl"), []byte(src), 0o644)
	p, cells := loadPlanFile(b, filepath.Join(dir, "plan.hcl"), "url="+srv.URL)
	b.SetBytes(mb << 20)
	b.ResetTimer()
	var requests int
	for range b.N {
		res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
		if err != nil || len(res.Rows) != 1 || res.Rows[0].Succeeded == 0 {
			b.Fatal(err, res)
		}
		requests = res.Rows[0].Requests
	}
	b.StopTimer()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Linux reports KiB
	b.ReportMetric(float64(requests), "requests")
}

// writeLargeTrace writes Mooncake rows, streamed, until the file holds size bytes.
func writeLargeTrace(b *testing.B, path string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i, n := int64(0), int64(0); n < size; i++ {
		k, _ := fmt.Fprintf(w, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%d, %d, %d, %d]}\n",
			i*3, 20+i%200, 1+i%16, i%7, i, i+1, i+2)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}
