package runreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// A report of embeddings rows only has a Results section holding the embeddings table,
// its figures at their decimals, and neither a headline table nor the generation rows'
// seed and detail tables.
func TestMarkdownEmbeddingsOnly(t *testing.T) {
	r := ledger.NewRow()
	r.CellID, r.Concurrency, r.Inputs, r.InputTokensPerInput = "emb", 4, 8, 128
	r.E2E = stats.Dist{P50: 0.05, P90: 0.08, P99: 0.1234}
	r.InputsPerSec, r.InputTokS, r.InputTokens = 160.3, 20480, 163840
	var b bytes.Buffer
	if err := WriteMarkdown(&b, Report{Rows: []ledger.Row{r}}); err != nil {
		t.Fatal(err)
	}
	want := "# planrun results\n\n## Results\n\n### Embeddings\n\n" + embeddingsNote + "\n\n" +
		"| Cell | Conc. | Inputs/request | Input length (tokens) | Latency p50 (s) | Latency p90 (s) | Latency p99 (s) | Inputs/s | Input tok/s | Input tokens | Failed | Errors |\n" +
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n" +
		"| emb | 4 | 8 | 128 | 0.050 | 0.080 | 0.123 | 160.3 | 20480.0 | 163840 | 0 | — |\n\n"
	got := b.String()
	if !strings.HasPrefix(got, want) {
		t.Fatalf("report starts\n%s\nwant\n%s", got, want)
	}
	for _, absent := range []string{english.none, "| " + strings.Join(headlineHead[:2], " | ") + " |", "### " + english.single, "## " + english.details} {
		if strings.Contains(got, absent) {
			t.Errorf("embeddings-only report has %q:\n%s", absent, got)
		}
	}
}

// Without embeddings rows there is no embeddings section.
func TestEmbeddingsTableNoRows(t *testing.T) {
	var b strings.Builder
	embeddingsTable(&b, nil)
	if b.Len() != 0 {
		t.Errorf("embeddings table without rows wrote %q", b.String())
	}
}
