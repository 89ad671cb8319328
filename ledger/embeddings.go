package ledger

import "strings"

// An embeddings workload's rows (Row.Inputs > 0) have their own columns: latency (E2E),
// inputs/s and input tokens/s from the server's usage; summary.json leaves the figures
// of generated tokens out of them.

// IsEmbeddings reports whether r is an embeddings workload's row.
func IsEmbeddings(r Row) bool { return r.Inputs > 0 }

// embeddingsColumns are the ledger columns of embeddings rows, appended after the
// earlier formats' columns so older ledgers upgrade in place.
func embeddingsColumns() []column {
	return []column{
		intCol("inputs_per_request", func(r *Row) *int { return &r.Inputs }),
		intCol("input_tokens_per_input", func(r *Row) *int { return &r.InputTokensPerInput }),
		intCol("inputs", func(r *Row) *int { return &r.InputsTotal }),
		intCol("input_tokens", func(r *Row) *int { return &r.InputTokens }),
		floatCol("inputs_s", 1, func(r *Row) *float64 { return &r.InputsPerSec }),
		floatCol("input_tok_s", 1, func(r *Row) *float64 { return &r.InputTokS }),
		modelMixColumn(),
	}
}

// embeddingsFields are result.inputs_s, result.input_tok_s and result.input_tokens.
var embeddingsFields = []ResultField{
	numField("inputs_s", "inputs/s", "inputs embedded per second (embeddings workloads)", 1, func(r *Row) float64 { return r.InputsPerSec }),
	numField("input_tok_s", "tokens/s", "input tokens per second by the server's usage (embeddings workloads)", 1, func(r *Row) float64 { return r.InputTokS }),
	intField("input_tokens", "the server's input tokens over the measured requests (embeddings workloads)", func(r *Row) int { return r.InputTokens }),
}

// generationOnly are the prefixes of the columns an embeddings row leaves out of
// summary.json: the figures of generated tokens.
var generationOnly = []string{"ttft_", "tpot_", "itl_", "decode_", "ttfo_", "reasoning_", "output_tok", "tokens_per_chunk",
	"answer_tokens", "early_stops", "server_ttft", "server_tpot", "max_tokens", "goodput_tok_s", "tokens_per_joule"}

// embeddingsOmits reports whether an embeddings row leaves column name out.
func embeddingsOmits(name string) bool {
	for _, p := range generationOnly {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
