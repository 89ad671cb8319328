package plan

import "github.com/planrun/planrun/ledger"

// LevelOf is the level a result row measured, every axis of it (concurrency, request
// rate, embeddings inputs and input length): rows of one cell that differ only by
// rate or inputs name different levels.
func LevelOf(r *ledger.Row) LoadLevel {
	return LoadLevel{Concurrency: r.Concurrency, RequestRate: r.RequestRate, Inputs: r.Inputs, InputTokens: r.InputTokensPerInput}
}
