package runreport

import (
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// An embeddings workload's rows (Row.Inputs > 0) have their own columns and their own
// table: latency (E2E: request start to the whole answer), inputs/s and input tokens/s
// from the server's usage, and the error classes. They never show TTFT, TPOT or output
// tokens, which an embeddings request does not have.

// splitEmbeddings separates the embeddings rows from the generation rows, in order.
func splitEmbeddings(rows []ledger.Row) (gen, emb []ledger.Row) {
	for _, r := range rows {
		if ledger.IsEmbeddings(r) {
			emb = append(emb, r)
		} else {
			gen = append(gen, r)
		}
	}
	return gen, emb
}

// embeddingsNote says how the embeddings table's figures are taken (a Markdown line).
const embeddingsNote = "**Latency** is request start to the whole answer (one JSON object; embeddings are not streamed, so there is no TTFT). Inputs/s = Σ inputs embedded / measured window; input tok/s = Σ the server's input token counts (`usage.prompt_tokens`, Ollama's `prompt_eval_count`) / window, median across runs."

// embeddingsCells is the embeddings table: one row per level.
func embeddingsCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Inputs/request", "Input length (tokens)", "Latency p50 (s)", "Latency p90 (s)", "Latency p99 (s)",
		"Inputs/s", "Input tok/s", "Input tokens", "Failed", "Errors"}
	for _, r := range rows {
		body = append(body, []string{r.CellID, concurrency(r), strconv.Itoa(r.Inputs), strconv.Itoa(r.InputTokensPerInput),
			mdtable.Num(r.E2E.P50, 1, 3), mdtable.Num(r.E2E.P90, 1, 3), mdtable.Num(r.E2E.P99, 1, 3), mdtable.Num(r.InputsPerSec, 1, 1), mdtable.Num(r.InputTokS, 1, 1),
			strconv.Itoa(r.InputTokens), strconv.Itoa(r.Failed), mdtable.Dash(ledger.FormatFailures(r.Failures))})
	}
	return head, body
}

// embeddingsTable writes the embeddings table under its explanation; nothing without
// embeddings rows.
func embeddingsTable(b *strings.Builder, rows []ledger.Row) {
	if len(rows) == 0 {
		return
	}
	head, body := embeddingsCells(rows)
	noteTable(b, "Embeddings", embeddingsNote, head, body)
}

// embeddingsHTMLCells are the embeddings rows' cells of the HTML report, one table each.
func embeddingsHTMLCells(rows []ledger.Row) []htmlCell {
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
		head, body := embeddingsCells([]ledger.Row{r})
		t := &cells[i].Tables[0]
		t.Head, t.Rows = head, append(t.Rows, body...)
	}
	return cells
}
