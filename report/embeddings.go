package report

import (
	"strconv"
	"strings"
)

// An embeddings workload's rows (Row.Inputs > 0) have their own columns and their own
// table: latency (E2E: request start to the whole answer), inputs/s and input tokens/s
// from the server's usage, and the error classes. They never show TTFT, TPOT or output
// tokens, which an embeddings request does not have.

// isEmbeddings reports whether r is an embeddings workload's row.
func isEmbeddings(r Row) bool { return r.Inputs > 0 }

// splitEmbeddings separates the embeddings rows from the generation rows, in order.
func splitEmbeddings(rows []Row) (gen, emb []Row) {
	for _, r := range rows {
		if isEmbeddings(r) {
			emb = append(emb, r)
		} else {
			gen = append(gen, r)
		}
	}
	return gen, emb
}

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
		strCol("model_mix", func(r *Row) *string { return &r.ModelMix }),
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

// embeddingsNote says how the embeddings table's figures are taken (a Markdown line).
const embeddingsNote = "**Latency** is request start to the whole answer (one JSON object; embeddings are not streamed, so there is no TTFT). Inputs/s = Σ inputs embedded / measured window; input tok/s = Σ the server's input token counts (`usage.prompt_tokens`, Ollama's `prompt_eval_count`) / window, median across runs."

// embeddingsCells is the embeddings table: one row per level.
func embeddingsCells(rows []Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Inputs/request", "Input length (tokens)", "Latency p50 (s)", "Latency p90 (s)", "Latency p99 (s)",
		"Inputs/s", "Input tok/s", "Input tokens", "Failed", "Errors"}
	for _, r := range rows {
		body = append(body, []string{r.CellID, concurrency(r), strconv.Itoa(r.Inputs), strconv.Itoa(r.InputTokensPerInput),
			num(r.E2E.P50, 1, 3), num(r.E2E.P90, 1, 3), num(r.E2E.P99, 1, 3), num(r.InputsPerSec, 1, 1), num(r.InputTokS, 1, 1),
			strconv.Itoa(r.InputTokens), strconv.Itoa(r.Failed), dash(formatFailures(r.Failures))})
	}
	return head, body
}

// embeddingsTable writes the embeddings table under its explanation; nothing without
// embeddings rows.
func embeddingsTable(b *strings.Builder, rows []Row) {
	if len(rows) == 0 {
		return
	}
	head, body := embeddingsCells(rows)
	noteTable(b, "Embeddings", embeddingsNote, head, body)
}

// embeddingsHTMLCells are the embeddings rows' cells of the HTML report, one table each.
func embeddingsHTMLCells(rows []Row) []htmlCell {
	var cells []htmlCell
	index := map[string]int{}
	for _, r := range rows {
		i, ok := index[r.CellID]
		if !ok {
			i = len(cells)
			index[r.CellID] = i
			cells = append(cells, htmlCell{ID: r.CellID, About: cellAbout(r),
				Tables: []htmlTable{{Title: "Embeddings", Note: inlineMarkdown(embeddingsNote)}}})
		}
		head, body := embeddingsCells([]Row{r})
		t := &cells[i].Tables[0]
		t.Head, t.Rows = head, append(t.Rows, body...)
	}
	return cells
}
