//go:build unix

package dataset

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkDrawLargeTrace streams a generated 1 GB Mooncake trace through Draw and
// reports the process's peak RSS: it should stay near the sample's size, not the file's.
// Set PLANRUN_DATASET_BENCH_MB for a smaller file.
func BenchmarkDrawLargeTrace(b *testing.B) {
	mb := int64(1024)
	if s := os.Getenv("PLANRUN_DATASET_BENCH_MB"); s != "" {
		fmt.Sscan(s, &mb)
	}
	path := filepath.Join(b.TempDir(), "trace.jsonl")
	writeTrace(b, path, mb<<20)
	b.SetBytes(mb << 20)
	b.ResetTimer()
	for range b.N {
		s, err := Draw(Spec{Path: path, Format: FormatMooncake}, 1000, 1)
		if err != nil || len(s.Rows) != 1000 {
			b.Fatal(err, len(s.Rows))
		}
	}
	b.StopTimer()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Linux reports KiB
}

// writeTrace writes Mooncake rows, streamed, until the file holds size bytes.
func writeTrace(b *testing.B, path string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for i := int64(0); n < size; i++ {
		k, _ := fmt.Fprintf(w, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%d, %d, %d, %d]}\n",
			i*3, 100+i%900, 1+i%300, i, i+1, i+2, i+3)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}
