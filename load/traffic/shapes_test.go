package traffic

import (
	"slices"
	"testing"

	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/plan"
)

func TestShapesOfPrefixGroupsAndHashBlocks(t *testing.T) {
	w := &plan.Workload{PromptTokens: 100, MaxTokens: 8, Concurrency: []int{1}, Requests: 7,
		PromptLength: dataset.Fixed(100), OutputLength: dataset.Fixed(8), Prefix: &plan.Prefix{Tokens: 40, Groups: 3}}
	for i, sh := range DrawShapes(w, dataset.Sample{}) {
		if sh.PromptTokens != 100 || sh.PrefixTokens != 40 || sh.PrefixGroup != i%3 {
			t.Fatalf("request %d: %+v, want the whole 100 tokens with group %d's 40-token prefix", i, sh, i%3)
		}
	}
	trace := dataset.Sample{Rows: []dataset.Row{{InputLength: 700, OutputTokens: 3, HashIDs: []int64{1, 2}}}}
	w = &plan.Workload{PromptTokens: 100, MaxTokens: 8, Concurrency: []int{1}, Requests: 2, Dataset: &plan.Dataset{},
		PromptLength: dataset.Length{Kind: dataset.LengthDataset}, OutputLength: dataset.Length{Kind: dataset.LengthDataset}}
	for _, sh := range DrawShapes(w, trace) {
		if sh.PromptTokens != 700 || !slices.Equal(sh.HashIDs, []int64{1, 2}) || sh.PrefixTokens != 0 {
			t.Fatalf("trace row shape %+v, want input length 700 with hash ids [1 2]", sh)
		}
	}
}
