package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
)

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		in, wantErr string
		want        Threshold
	}{
		{in: "ttft_p99_s>+10%", want: Threshold{Field: "ttft_p99_s", Op: '>', Limit: 10, Percent: true}},
		{in: "output_tok_s<-5%", want: Threshold{Field: "output_tok_s", Op: '<', Limit: -5, Percent: true}},
		{in: "e2e_p99_s>+0.5", want: Threshold{Field: "e2e_p99_s", Op: '>', Limit: 0.5}},
		{in: "ttft_p99>+10%", wantErr: `Did you mean "ttft_p99_s"?`},
		{in: "ttft_p99_s>10%", wantErr: "needs its sign"},
		{in: "ttft_p99_s=+10%", wantErr: "has no > or <"},
		{in: "ttft_p99_s>+ten%", wantErr: `"+ten" is not a number`},
		{in: "concurrency>+1", wantErr: `no figure "concurrency"`},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseThreshold(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			c.want.Text = c.in
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func gateRows(ttftP99, tokS float64, succeeded int) []ledger.Row {
	r := toolRow("openai.vllm", 4, 0.5, 0.02, tokS, 8)
	r.TTFT.P99 = ttftP99
	r.Succeeded = succeeded
	return []ledger.Row{r}
}

func TestGateCatchesRegressionAndPassesRerun(t *testing.T) {
	ts := []Threshold{}
	for _, s := range []string{"ttft_p99_s>+10%", "output_tok_s<-5%"} {
		th, err := ParseThreshold(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	base := gateRows(1.0, 100, 200)
	if b := Gate(Compare(base, gateRows(1.05, 98, 200)), ts); len(b) != 0 {
		t.Fatalf("a rerun within the thresholds breached: %v", b)
	}
	b := Gate(Compare(base, gateRows(1.2, 90, 200)), ts)
	if len(b) != 2 || b[0].Threshold.Field != "ttft_p99_s" || b[1].Threshold.Field != "output_tok_s" {
		t.Fatalf("breaches = %v, want ttft_p99_s and output_tok_s", b)
	}
	msg := b[0].String()
	for _, want := range []string{"qwen2.5-7b/q4_K_M/rtx4060/short c=4 openai.vllm", "ttft_p99_s", "+20.0%", "ttft_p99_s>+10%"} {
		if !strings.Contains(msg, want) {
			t.Errorf("breach %q lacks %q", msg, want)
		}
	}
	if b[0].Inconclusive || b[1].Inconclusive {
		t.Error("200 requests a side marked too few to conclude on a p99")
	}
}

func TestCompareSaysTooFew(t *testing.T) {
	deltas := Compare(gateRows(1.0, 100, 5), gateRows(1.0, 100, 6))
	if !deltas[0].TooFew || !strings.Contains(deltas[0].Notes, "too few requests to conclude (5 vs 6)") {
		t.Fatalf("delta = %+v", deltas[0])
	}
	var text bytes.Buffer
	if err := WriteCompareText(&text, deltas, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "1 of 1 rows have fewer than 20 successful requests") {
		t.Fatalf("text lacks the too-few line:\n%s", text.String())
	}
}

func TestCompareJSONHasEveryFigure(t *testing.T) {
	deltas := Compare(gateRows(1.0, 100, 200), gateRows(1.2, 90, 200))
	th, _ := ParseThreshold("ttft_p99_s>+10%")
	var buf bytes.Buffer
	if err := WriteCompareJSON(&buf, deltas, "a", "b", Gate(deltas, []Threshold{th})); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []struct {
			Figures map[string]struct {
				A, B *float64
				Pct  *float64 `json:"delta_pct"`
			}
		}
		Breaches []struct{ Row, Figure string }
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	for _, f := range CompareFields {
		if _, ok := got.Rows[0].Figures[f.Name]; !ok {
			t.Errorf("JSON lacks figure %s", f.Name)
		}
	}
	if p := got.Rows[0].Figures["ttft_p99_s"].Pct; p == nil || *p < 19.9 || *p > 20.1 {
		t.Errorf("ttft_p99_s Δ%% = %v, want 20", p)
	}
	if len(got.Breaches) != 1 || got.Breaches[0].Figure != "ttft_p99_s" {
		t.Errorf("breaches = %+v", got.Breaches)
	}
}

// A row of B that measured nothing (every request failed) fails the gate rather than
// crossing nothing.
func TestGateFailsARowBLost(t *testing.T) {
	th, _ := ParseThreshold("ttft_p99_s>+10%")
	lost := gateRows(math.NaN(), math.NaN(), 0)
	b := Gate(Compare(gateRows(1.0, 100, 200), lost), []Threshold{th})
	if len(b) != 1 || !strings.Contains(b[0].String(), "ttft_p99_s was 1 in A and not measured in B (ttft_p99_s>+10%)") {
		t.Fatalf("breaches = %v", b)
	}
	// A figure neither side measured is no breach.
	if b := Gate(Compare(lost, lost), []Threshold{th}); len(b) != 0 {
		t.Fatalf("breaches = %v", b)
	}
}

// On 40 requests a side a p99 rests on the largest value or two: a threshold on it is
// judged on the p95, which 40 requests resolve. On 10 nothing is resolved: crossings are
// reported as inconclusive and fail only with strict.
func TestGateTailPercentileNeedsRequests(t *testing.T) {
	var ts []Threshold
	for _, s := range []string{"ttft_p99_s>+10%", "output_tok_s<-5%"} {
		th, err := ParseThreshold(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	rows := func(p95, p99, tokS float64, n int) []ledger.Row {
		r := gateRows(p99, tokS, n)
		r[0].TTFT.P95 = p95
		return r
	}
	// The p99 jumps 20% (one slow request), the p95 holds: no breach.
	if got := Gate(Compare(rows(1.0, 1.0, 100, 40), rows(1.02, 1.2, 100, 40)), ts); len(got) != 0 {
		t.Fatalf("breaches = %v", got)
	}
	// The p95 moves too: a breach judged on it.
	got := Gate(Compare(rows(1.0, 1.0, 100, 40), rows(1.2, 1.3, 100, 40)), ts)
	if len(got) != 1 || got[0].JudgedOn != "ttft_p95_s" || got[0].Inconclusive ||
		!strings.Contains(got[0].String(), "ttft_p95_s 1 → 1.2 (+20.0%) crossed ttft_p99_s>+10%, judged on ttft_p95_s: "+
			"40 successful requests a side cannot resolve ttft_p99_s (it needs 200)") {
		t.Fatalf("breaches = %v", got)
	}
	got = Gate(Compare(rows(1.0, 1.0, 100, 10), rows(1.2, 1.3, 90, 10)), ts)
	if len(got) != 2 || !got[0].Inconclusive || !got[1].Inconclusive || got[0].Have != 10 {
		t.Fatalf("breaches on 10 requests = %+v", got)
	}
	if len(Failing(got, false)) != 0 || len(Failing(got, true)) != 2 {
		t.Errorf("failing %v, strict %v", Failing(got, false), Failing(got, true))
	}
	if !strings.Contains(got[0].String(), "but inconclusive: ttft_p99_s needs 200 successful requests a side, the rows have 10") {
		t.Errorf("message %q", got[0].String())
	}
	for field, want := range map[string]int{"ttft_p50_s": 20, "ttft_p95_s": 40, "itl_p99_ms": 200, "output_tok_s": 20} {
		if got := RequestsToConclude(field); got != want {
			t.Errorf("RequestsToConclude(%s) = %d, want %d", field, got, want)
		}
	}
}
