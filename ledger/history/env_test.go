package history

import (
	"testing"

	"github.com/planrun/planrun/ledger"
)

// A row a batch scheduler ran takes its host from the scheduler's node, whichever the
// scheduler: two Kubernetes runs on one node, each in a pod of a new name, are the same
// environment; a run on another node is not.
func TestEnvHostIsTheBatchNode(t *testing.T) {
	row := func(host string, place ledger.BatchPlace) ledger.Row {
		return ledger.Row{Version: "v1", PlanHash: "h", Tool: "openai.vllm", Host: host, Batch: place}
	}
	kube := func(pod, node string) ledger.Row {
		return row(pod, ledger.BatchPlace{Scheduler: "kubernetes", Job: "bench/" + pod, Node: node, Pod: pod, State: "COMPLETE"})
	}
	for _, tc := range []struct {
		name string
		a, b ledger.Row
		want string
	}{
		{"kubernetes, new pod, same node", kube("planrun-c-1-aaaa-0-x1", "gpu1"), kube("planrun-c-1-bbbb-0-y2", "gpu1"), "same environment"},
		{"kubernetes, other node", kube("planrun-c-1-aaaa-0-x1", "gpu1"), kube("planrun-c-1-bbbb-0-y2", "gpu2"), "host gpu1 → gpu2"},
		{"slurm, same node", row("node1", ledger.BatchPlace{Scheduler: "slurm", Job: "41", Node: "node1"}),
			row("node1.cluster", ledger.BatchPlace{Scheduler: "slurm", Job: "42", Node: "node1"}), "same environment"},
		{"here", row("laptop", ledger.BatchPlace{}), row("laptop", ledger.BatchPlace{}), "same environment"},
	} {
		if got := Explain(EnvOf(tc.a, nil), EnvOf(tc.b, nil)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
