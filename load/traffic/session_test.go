package traffic

import (
	"testing"

	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/plan"
)

// The longest request of a session workload carries its history: an agent loop's last
// step every earlier step's calls and results too, at the longest result.
func TestLongestSessionRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		session *plan.Session
		want    int
	}{
		{"no session", nil, 100},
		{"3 turns", &plan.Session{Turns: 3}, 3*100 + 2*20},
		{"agent loop", &plan.Session{Turns: 2, Agent: &plan.AgentLoop{MaxSteps: 4, ResultTokens: dataset.Length{Kind: dataset.LengthUniform, Min: 10, Max: 50}}},
			2*100 + 7*(20+50)},
		{"replay", &plan.Session{Turns: 1, Agent: &plan.AgentLoop{MaxSteps: 4, Trajectories: []string{"x.traj"}}}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &plan.Workload{PromptTokens: 100, MaxTokens: 20, Session: tc.session}
			if in, out := LongestRequest(w, nil); in != tc.want || out != 20 {
				t.Errorf("longest request %d in, %d out; want %d, 20", in, out, tc.want)
			}
		})
	}
}
