package gpu

import (
	"strings"
	"testing"
)

func TestCheckDeclared(t *testing.T) {
	rtx4060 := Device{Index: 0, Name: "NVIDIA GeForce RTX 4060", TotalBytes: 8188 << 20}
	h200 := Device{Index: 0, Name: "NVIDIA H200", TotalBytes: 143771 << 20}
	h100 := Device{Index: 1, Name: "NVIDIA H100 80GB HBM3", TotalBytes: 81559 << 20}
	for _, tc := range []struct {
		name     string
		devs     []Device
		gpu      string
		vramGB   float64
		wantWarn []string // substrings, one per warning
	}{
		{"nothing declared", []Device{h200}, "", 0, nil},
		{"seed's RTX 4060", []Device{rtx4060}, "RTX 4060", 8, nil},
		{"dashes and case", []Device{rtx4060}, "rtx-4060", 0, nil},
		{"H200 in GB as sold", []Device{h200}, "H200", 141, nil},
		{"H200 in decimal GB", []Device{h200}, "NVIDIA H200", 150, nil},
		{"one of several", []Device{h200, h100}, "H100", 80, nil},
		{"wrong card", []Device{rtx4060}, "RTX 4090", 0, []string{`declares gpu "RTX 4090" but NVML sees GPU 0 "NVIDIA GeForce RTX 4060"`}},
		{"wrong memory", []Device{rtx4060}, "RTX 4060", 16, []string{"vram_gb = 16 but NVML sees GPU 0: 8.0 GiB"}},
		{"both wrong", []Device{h200}, "RTX 4060", 8, []string{"declares gpu", "vram_gb = 8"}},
		{"no GPU seen", nil, "RTX 4060", 8, []string{"NVML sees no GPU"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckDeclared(Info{Devices: tc.devs}, tc.gpu, tc.vramGB)
			if len(got) != len(tc.wantWarn) {
				t.Fatalf("warnings %q, want %d", got, len(tc.wantWarn))
			}
			for i, w := range tc.wantWarn {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q does not contain %q", got[i], w)
				}
			}
		})
	}
}

func TestCUDAVersionString(t *testing.T) {
	for in, want := range map[int]string{12040: "12.4", 13000: "13.0", 11080: "11.8", 0: ""} {
		if got := cudaVersionString(in); got != want {
			t.Errorf("cudaVersionString(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestRemote(t *testing.T) {
	tel := Remote("gpu-box:8000")
	if tel.Available() || !strings.Contains(tel.Note(), "remote (host gpu-box:8000)") {
		t.Fatalf("Remote note %q", tel.Note())
	}
	if w := tel.CheckDeclared("H200", 141); len(w) != 1 || !strings.Contains(w[0], "not checked") {
		t.Errorf("CheckDeclared on remote: %v", w)
	}
	sum := tel.Start(0, nil).Stop()
	if sum.Note != tel.Note() || sum.Interval != DefaultInterval {
		t.Errorf("Summary %+v", sum)
	}
}
