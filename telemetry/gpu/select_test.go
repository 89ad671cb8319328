//go:build cgo

package gpu

import (
	"strings"
	"testing"
	"time"
)

// TestSelectSamplesOnlyThoseGPUs: a hardware block's gpus = [2, 0] on a four-GPU mock
// samples GPUs 2 and 0, in that order, and nothing of GPUs 1 and 3.
func TestSelectSamplesOnlyThoseGPUs(t *testing.T) {
	srv, st := mockServer(t, 4)
	tel, clk := openMock(t, srv)
	for i := range st {
		st[i].usedV2 = uint64(i+1) * gib // GPU i uses i+1 GiB
	}
	sel, err := tel.Select([]int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sel.Info().Devices); n != 2 || sel.Info().Devices[0].Index != 2 || sel.Info().Devices[1].Index != 0 {
		t.Fatalf("selection's devices %+v", sel.Info().Devices)
	}
	b := sel.Baseline()
	if len(b.UsedBytes) != 2 || b.UsedBytes[0] != 3*gib || b.UsedBytes[1] != 1*gib {
		t.Fatalf("baseline %v, want GPU 2's 3 GiB and GPU 0's 1 GiB", b.UsedBytes)
	}
	st[2].usedV2, st[1].usedV2, st[3].usedV2 = 7*gib, 40*gib, 40*gib // load on 2; the others are not ours
	s := manualSampler(sel, nil)
	clk.advance(100 * time.Millisecond)
	sum := s.Stop()
	if len(sum.Devices) != 2 || sum.Devices[0].Index != 2 || sum.Devices[0].PeakUsedBytes != 7*gib || sum.Devices[1].PeakUsedBytes != 1*gib {
		t.Errorf("summary devices %+v", sum.Devices)
	}
	if got := sum.PeakTotalUsedBytes(); got != 8*gib {
		t.Errorf("peak total %d GiB, want 8 (GPUs 1 and 3 left out)", got/gib)
	}
	sel.Close() // must not close the machine's session
	if !tel.Available() || len(tel.Baseline().UsedBytes) != 4 {
		t.Error("closing the selection closed the machine's telemetry")
	}
}

func TestSelectMissingGPU(t *testing.T) {
	srv, _ := mockServer(t, 2)
	tel, _ := openMock(t, srv)
	if _, err := tel.Select([]int{0, 5}); err == nil || !strings.Contains(err.Error(), "no GPU 5") || !strings.Contains(err.Error(), "GPU 1") {
		t.Errorf("err %v: want no GPU 5, naming the GPUs there are", err)
	}
	if _, err := unavailable(NoteLibraryNotFound).Select([]int{0}); err == nil || !strings.Contains(err.Error(), "NVML library not found") {
		t.Errorf("without NVML: %v", err)
	}
}
