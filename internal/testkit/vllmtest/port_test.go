package vllmtest

import (
	"os"
	"path/filepath"
	"testing"
)

// A start is retried only when vLLM's log says its port was taken.
func TestPortTaken(t *testing.T) {
	for _, tc := range []struct {
		log  string
		want bool
	}{
		{"OSError: [Errno 98] Address already in use\n", true},
		{"RuntimeError: Engine core initialization failed\n", false},
		{"", false},
	} {
		dir := t.TempDir()
		if tc.log != "" {
			if err := os.WriteFile(filepath.Join(dir, "vllm.log"), []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := portTaken(dir); got != tc.want {
			t.Errorf("log %q: portTaken %v, want %v", tc.log, got, tc.want)
		}
	}
}
