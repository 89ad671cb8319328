package serverstats

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseDCGMMetrics(t *testing.T) {
	f, err := os.Open("testdata/dcgm.prom")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := ParseDCGMMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("got %d GPUs, want 2: %+v", len(rs), rs)
	}
	g := rs[0]
	if g.GPU != "0" || g.Model != "NVIDIA H200" || g.Host != "gpu-a" || !strings.HasPrefix(g.UUID, "GPU-") {
		t.Errorf("labels: %+v", g)
	}
	if g.UsedBytes != 128344*mib || g.FreeBytes != 14503*mib || g.ReservedBytes != 539*mib || !g.HasReserved {
		t.Errorf("memory: used %d free %d reserved %d", g.UsedBytes, g.FreeBytes, g.ReservedBytes)
	}
	if g.UtilPct != 87 || g.PowerW != 512.25 {
		t.Errorf("util %v power %v", g.UtilPct, g.PowerW)
	}
	if rs[1].GPU != "1" || rs[1].UsedBytes != 0 || rs[1].PowerW != 74.5 {
		t.Errorf("second GPU: %+v", rs[1])
	}
}

func TestParseDCGMMetricsRefusesOtherExporters(t *testing.T) {
	f, err := os.Open("testdata/vllm-v1-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ParseDCGMMetrics(f); err == nil || !strings.Contains(err.Error(), "DCGM_FI_DEV_FB_USED") {
		t.Fatalf("want an error naming the missing gauge, got %v", err)
	}
}

func TestDCGMPollerKeepsPeakPerGPU(t *testing.T) {
	body, err := os.ReadFile("testdata/dcgm.prom")
	if err != nil {
		t.Fatal(err)
	}
	scrapes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes++
		b := string(body)
		if scrapes == 2 { // a peak in the middle of the window
			b = strings.Replace(b, "} 128344", "} 130000", 1)
		}
		w.Write([]byte(b))
	}))
	defer srv.Close()
	p := newDCGMPoller(context.Background(), srv.Client(), srv.URL+"/metrics", time.Hour)
	p.pollOnce()
	p.pollOnce()
	p.pollOnce()
	r := p.report
	if r.Source != "dcgm exporter" || r.Polls != 3 || r.Failures != 0 {
		t.Fatalf("report: %+v", r)
	}
	if len(r.GPUs) != 2 {
		t.Fatalf("GPUs: %+v", r.GPUs)
	}
	if got := uint64(r.GPUs[0].UsedBytes.Peak); got != 130000*mib {
		t.Errorf("peak used = %d MiB, want 130000", got/mib)
	}
	if r.GPUs[0].TotalBytes != (128344+14503+539)*mib {
		t.Errorf("total = %d MiB", r.GPUs[0].TotalBytes/mib)
	}
	if r.PeakUsedBytes() != 130000*mib {
		t.Errorf("PeakUsedBytes = %d MiB", r.PeakUsedBytes()/mib)
	}
}
