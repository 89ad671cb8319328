package runreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
)

// The seed table has a Quality column, before Notes, only when a row has quality
// figures: the reference's rows say so, the others how far they drift.
func TestSeedTableQualityColumn(t *testing.T) {
	ref := ledgertest.SampleRow("m/tiny/f16", 1)
	ref.Quantization = "f16"
	ref.Quality = ledger.NewQuality()
	ref.Quality.Reference, ref.Quality.SameTop1Pct, ref.Quality.FloorSameTop1Pct = "f16", 100, 100
	q4 := ledgertest.SampleRow("m/tiny/q4", 1)
	q4.Quantization = "q4_K_M"
	q4.Quality = ledger.NewQuality()
	q4.Quality.Reference, q4.Quality.SameTop1Pct, q4.Quality.KLMean, q4.Quality.FloorSameTop1Pct = "f16", 42.19, 0.3149, 100
	for _, tc := range []struct {
		lang, head string
	}{{"", "| Concurrency | Quality | Notes |"}, {"zh", "| 并发 | 质量 | 备注 |"}} {
		var b bytes.Buffer
		if err := WriteMarkdown(&b, Report{Rows: []ledger.Row{ref, q4}, Language: tc.lang}); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		for _, want := range []string{tc.head, "| reference |", "| vs f16: 42.2% same top-1, KL 0.31 |"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: no %q in\n%s", tc.lang, want, got)
			}
		}
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, Report{Rows: []ledger.Row{ledgertest.SampleRow("c", 1)}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Quality") {
		t.Errorf("a table without quality figures has a Quality column:\n%s", b.String())
	}
}
