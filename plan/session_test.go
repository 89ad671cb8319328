package plan

import (
	"testing"
	"time"
)

// A session block decodes into the workload, and requests per run are sessions × turns
// (sessions defaulting to one per concurrency slot).
func TestSessionBlock(t *testing.T) {
	src := `
workload "chat" {
  concurrency = [2, 4]
  session {
    turns      = 3
    think_time = "1500ms"
  }
}
workload "fixed" {
  session {
    turns    = 2
    sessions = 5
  }
}
`
	p, diags := LoadFiles(t.TempDir(), map[string][]byte{"s.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	chat, fixed := p.Workloads[0], p.Workloads[1]
	if s := chat.Session; s == nil || s.Turns != 3 || s.ThinkTime != 1500*time.Millisecond || s.Sessions != 0 {
		t.Fatalf("session %+v", s)
	}
	if got := []int{chat.RequestsPerRun(2), chat.RequestsPerRun(4), fixed.RequestsPerRun(1), fixed.RequestsPerRun(8)}; got[0] != 6 || got[1] != 12 || got[2] != 10 || got[3] != 10 {
		t.Errorf("requests per run %v, want [6 12 10 10]", got)
	}
}
