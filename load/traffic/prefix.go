package traffic

import (
	"cmp"

	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// prefixShape puts request i of a run in its prefix group, round robin (i % groups),
// when the workload has a prefix block; its prompt keeps its whole length, the prefix
// included.
func prefixShape(w *plan.Workload, i int, sh *executor.Shape) {
	if w.Prefix == nil {
		return
	}
	sh.PromptTokens = cmp.Or(sh.PromptTokens, w.PromptTokens)
	sh.PrefixTokens, sh.PrefixGroup = w.Prefix.Tokens, i%w.Prefix.Groups
}

// blockSize is the tokens per hash id of the workload's dataset (0: the executor's
// default).
func blockSize(w *plan.Workload) int {
	if w.Dataset == nil {
		return 0
	}
	return w.Dataset.BlockSize
}
