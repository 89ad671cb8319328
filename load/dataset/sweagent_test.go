package dataset

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A SWE-agent trajectory's steps are its model calls: each sends the messages it was
// shown (its query, or the history up to its answer), and waits its action's
// execution_time after; the calls and results keep their ids, demonstrations left out.
func TestReadTrajectory(t *testing.T) {
	for _, path := range []string{"../../examples/data/swe-agent/fix-parse-date.traj", "testdata/history-only.traj"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr, err := ReadTrajectory(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Steps) != 4 {
				t.Fatalf("%d steps, want 4", len(tr.Steps))
			}
			for k, st := range tr.Steps {
				// Step k (from 0) shows the system prompt, the task, and k calls with their results.
				if len(st.Messages) != 2+2*k || st.Messages[0].Role != "system" || st.Messages[1].Role != "user" {
					t.Fatalf("step %d: %d messages %+v", k+1, len(st.Messages), st.Messages)
				}
				for j := 1; j <= k; j++ {
					call, res := st.Messages[2*j], st.Messages[2*j+1]
					if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].Name != "bash" || call.ToolCalls[0].Args == "" ||
						res.Role != "tool" || res.ToolCallID != call.ToolCalls[0].ID || res.Content == "" {
						t.Fatalf("step %d: call %+v, result %+v", k+1, call, res)
					}
				}
			}
			if want := []time.Duration{412 * time.Millisecond, 87 * time.Millisecond, 1934 * time.Millisecond, 51 * time.Millisecond}; tr.Steps[2].ToolTime != want[2] || tr.Steps[0].ToolTime != want[0] {
				t.Errorf("tool times %v, %v; want %v", tr.Steps[0].ToolTime, tr.Steps[2].ToolTime, want)
			}
		})
	}
}

func TestReadTrajectoryErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"not-json":     `{"trajectory": [`,
		"no-steps":     `{"trajectory": [], "history": []}`,
		"no-query":     `{"trajectory": [{"execution_time": 1}], "history": [{"role": "user", "content": "x"}]}`,
		"ends-in-self": `{"trajectory": [{"query": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}]}`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := ReadTrajectory(p); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
}
