package runreport

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
	"github.com/planrun/planrun/stats"
)

// mixRow is sampleRow with a mix of two names whose figures differ from the pooled ones.
func mixRow() ledger.Row {
	r := ledgertest.SampleRow("gw/mix", 8)
	r.Models = []ledger.ModelFigures{
		{Name: "tiny", Weight: 2, Requests: 20, Succeeded: 19, Failed: 1, Failures: map[string]int{"5xx": 1},
			TTFT: stats.Dist{P50: 0.111, P99: 0.222}, TPOT: stats.Dist{P50: 0.0033, P99: 0.0044},
			E2E: stats.Dist{P50: 1.555, P99: 1.666}, OutputTokens: 4864},
		{Name: "tiny-lora-a", Weight: 1, Requests: 10, Succeeded: 9, Failed: 1, Failures: map[string]int{"timeout": 1},
			TTFT: stats.Dist{P50: 0.777, P99: 0.888}, TPOT: stats.Dist{P50: 0.0077, P99: 0.0088},
			E2E: stats.Dist{P50: 2.555, P99: 2.666}, OutputTokens: 2304},
	}
	return r
}

// The reports give a mix row's figures per name in a Models table, with the pooled row
// beside them; a row without a mix has no such table.
func TestReportsShowModelMix(t *testing.T) {
	var md, html bytes.Buffer
	rows := []ledger.Row{mixRow(), ledgertest.SampleRow("plain", 1)}
	if err := WriteMarkdown(&md, Report{Title: "t", Rows: rows}); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, Report{Title: "t", Rows: rows}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### Models\n",
		"| gw/mix | 8 | tiny | 2 | 20 | 66.7% | 1 | 5xx=1 | 0.111 | 0.222 | 3.3 | 4.4 | 1.555 | 1.666 | 4864 |",
		"| gw/mix | 8 | tiny-lora-a | 1 | 10 | 33.3% | 1 | timeout=1 | 0.777 | 0.888 | 7.7 | 8.8 | 2.555 | 2.666 | 2304 |",
		"| gw/mix | 8 | all (pooled) | 3 | 30 | 100.0% | 2 | 5xx=1;timeout=1 | 0.820 | 0.950 | 28.0 | 31.0 | 7.900 | 8.200 | 7168 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Count(md.String(), "| all (pooled) |") != 1 {
		t.Errorf("a row without a mix got a Models line:\n%s", md.String())
	}
	h := html.String()
	if strings.Count(h, ">Models<") != 1 {
		t.Errorf("HTML has %d Models tables, want 1 (the mix cell's)", strings.Count(h, ">Models<"))
	}
	for _, want := range []string{"<td>tiny-lora-a</td>", "<td>all (pooled)</td>", "<td>0.777</td>"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// A mix row without requests has no share to show: "—", not a percentage of nothing.
func TestMixShareWithoutRequests(t *testing.T) {
	r := mixRow()
	r.Requests = 0
	for i := range r.Models {
		r.Models[i].Requests = 0
	}
	head, body := mixCells([]ledger.Row{r})
	share := slices.Index(head, "Share")
	if len(body) != 3 || share < 0 {
		t.Fatalf("head %q, %d lines, want a Share column and 3 lines", head, len(body))
	}
	for _, line := range body {
		if line[share] != "—" {
			t.Errorf("%s: share %q, want —", line[2], line[share])
		}
	}
}
