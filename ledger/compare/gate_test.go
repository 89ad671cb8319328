package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
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

// thresholds parses each spec, failing the test on one that does not parse.
func thresholds(t testing.TB, specs ...string) []Threshold {
	t.Helper()
	ts := make([]Threshold, len(specs))
	for i, s := range specs {
		th, err := ParseThreshold(s)
		if err != nil {
			t.Fatal(err)
		}
		ts[i] = th
	}
	return ts
}

func TestGateCatchesRegressionAndPassesRerun(t *testing.T) {
	ts := thresholds(t, "ttft_p99_s>+10%", "output_tok_s<-5%")
	base := gateRows(1.0, 100, 400)
	if b := Gate(Compare(base, gateRows(1.05, 98, 400)), ts); len(b) != 0 {
		t.Fatalf("a rerun within the thresholds breached: %v", b)
	}
	b := Gate(Compare(base, gateRows(1.2, 90, 400)), ts)
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
		t.Error("400 requests a side marked too few to conclude on a p99")
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
	deltas := Compare(gateRows(1.0, 100, 400), gateRows(1.2, 90, 400))
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

// On 40 requests a side no order statistic bounds a p99: a threshold on it is judged on
// the p90, which 40 requests bound (36 do at 95%). On 10 nothing is resolved: crossings are
// reported as inconclusive and fail only with strict.
func TestGateTailPercentileNeedsRequests(t *testing.T) {
	ts := thresholds(t, "ttft_p99_s>+10%", "output_tok_s<-5%")
	rows := func(p90, p99, tokS float64, n int) []ledger.Row {
		r := gateRows(p99, tokS, n)
		r[0].TTFT.P90 = p90
		return r
	}
	// The p99 jumps 20% (one slow request), the p90 holds: no breach.
	if got := Gate(Compare(rows(1.0, 1.0, 100, 40), rows(1.02, 1.2, 100, 40)), ts); len(got) != 0 {
		t.Fatalf("breaches = %v", got)
	}
	// The p90 moves too: a breach judged on it.
	got := Gate(Compare(rows(1.0, 1.0, 100, 40), rows(1.2, 1.3, 100, 40)), ts)
	if len(got) != 1 || got[0].JudgedOn != "ttft_p90_s" || got[0].Inconclusive ||
		!strings.Contains(got[0].String(), "ttft_p90_s 1 → 1.2 (+20.0%) crossed ttft_p99_s>+10%, judged on ttft_p90_s: "+
			"40 successful requests a side cannot resolve ttft_p99_s (it needs 368)") {
		t.Fatalf("breaches = %v", got)
	}
	got = Gate(Compare(rows(1.0, 1.0, 100, 10), rows(1.2, 1.3, 90, 10)), ts)
	if len(got) != 2 || !got[0].Inconclusive || !got[1].Inconclusive || got[0].Have != 10 {
		t.Fatalf("breaches on 10 requests = %+v", got)
	}
	if len(Failing(got, false)) != 0 || len(Failing(got, true)) != 2 {
		t.Errorf("failing %v, strict %v", Failing(got, false), Failing(got, true))
	}
	if !strings.Contains(got[0].String(), "but inconclusive: ttft_p99_s needs 368 successful requests a side, the rows have 10") {
		t.Errorf("message %q", got[0].String())
	}
	for field, want := range map[string]int{"ttft_p50_s": 20, "ttft_p90_s": 36, "ttft_p95_s": 72, "itl_p99_ms": 368, "output_tok_s": 20} {
		if got := RequestsToConclude(field); got != want {
			t.Errorf("RequestsToConclude(%s) = %d, want %d", field, got, want)
		}
	}
}

// A threshold whose text starts with its operator names no figure: the error says so,
// not that the > or < is missing.
func TestParseThresholdOperatorFirstNamesNoFigure(t *testing.T) {
	_, err := ParseThreshold(">+10%")
	if err == nil || !strings.Contains(err.Error(), `no figure ""`) {
		t.Fatalf("error = %v, want one saying there is no figure \"\"", err)
	}
}

// A change exactly at the limit does not cross it (the gate fails on "more than"), and
// an absolute threshold measures B − A, not any other combination of the two.
func TestThresholdCrossedAtAndBeyondLimit(t *testing.T) {
	th := func(s string) Threshold { return thresholds(t, s)[0] }
	for _, c := range []struct {
		th      string
		a, b    float64
		by      float64
		crossed bool
	}{
		// (1.25 − 1) / 1 × 100 and (75 − 100) / 100 × 100 are exact in binary: 25 and −25.
		{"ttft_p99_s>+25%", 1, 1.25, 25, false},
		{"ttft_p99_s>+25%", 1, 1.26, 26, true},
		{"output_tok_s<-25%", 100, 75, -25, false},
		{"output_tok_s<-25%", 100, 74, -26, true},
		// B − A: 8.75 − 8 = 0.75 exactly; 89.5 − 100 = −10.5.
		{"e2e_p99_s>+0.75", 8, 8.75, 0.75, false},
		{"e2e_p99_s>+0.5", 8, 8.75, 0.75, true},
		{"e2e_p99_s>+1", 8, 8.75, 0.75, false},
		{"output_tok_s<-10", 100, 89.5, -10.5, true},
		{"output_tok_s<-11", 100, 89.5, -10.5, false},
	} {
		by, crossed := th(c.th).Crossed(change(c.a, c.b))
		if math.Abs(by-c.by) > 1e-9 || crossed != c.crossed {
			t.Errorf("%s on %v → %v: change %v crossed %v, want %v, %v", c.th, c.a, c.b, by, crossed, c.by, c.crossed)
		}
	}
}

// The JSON names each side's tool, and leaves out the tool of a side without a row.
func TestCompareJSONNamesTools(t *testing.T) {
	a := []ledger.Row{toolRow("ollama.local", 1, 0.8, 0.028, 35, 4.5), toolRow("ollama.local", 4, 1.6, 0.04, 100, 4.6)}
	b := []ledger.Row{toolRow("openai.vllm", 1, 0.4, 0.014, 70, 7), toolRow("openai.vllm", 16, 0.9, 0.02, 400, 7)}
	var buf bytes.Buffer
	if err := WriteCompareJSON(&buf, Compare(a, b), "a", "b", nil); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []struct {
			Concurrency int
			ToolA       *string `json:"tool_a"`
			ToolB       *string `json:"tool_b"`
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	str := func(p *string) string {
		if p == nil {
			return "<absent>"
		}
		return *p
	}
	want := [][3]string{{"1", "ollama.local", "openai.vllm"}, {"4", "ollama.local", "<absent>"}, {"16", "<absent>", "openai.vllm"}}
	if len(got.Rows) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(got.Rows), len(want), buf.String())
	}
	for i, w := range want {
		r := got.Rows[i]
		if g := [3]string{strconv.Itoa(r.Concurrency), str(r.ToolA), str(r.ToolB)}; g != w {
			t.Errorf("row %d: concurrency, tool_a, tool_b = %v, want %v", i, g, w)
		}
	}
}

// The Markdown under a comparison says nothing without breaches, "Gate failed" with the
// count of conclusive ones when there are any, and "Gate passed" with the count of
// inconclusive ones when all are; each breach is a list item, its | escaped for tables.
func TestWriteBreachesMarkdown(t *testing.T) {
	md := func(bs []Breach) string {
		t.Helper()
		var buf bytes.Buffer
		if err := WriteBreachesMarkdown(&buf, bs); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if got := md(nil); got != "" {
		t.Errorf("no breaches wrote %q, want nothing", got)
	}
	th, _ := ParseThreshold("ttft_p99_s>+10%")
	conclusive := Breach{Row: "m|x/q/h/w c=1", Threshold: th, Change: change(1, 1.2), By: 20, Have: 200, Need: 368}
	inconclusive := conclusive
	inconclusive.Inconclusive, inconclusive.Have = true, 10
	line := func(b Breach) string { return "- " + strings.ReplaceAll(b.String(), "|", `\|`) + "\n" }
	if !strings.HasPrefix(line(conclusive), `- m\|x/q/h/w c=1: ttft_p99_s 1 → 1.2 (+20.0%) crossed ttft_p99_s>+10%`) {
		t.Fatalf("breach line %q", line(conclusive))
	}
	if got, want := md([]Breach{conclusive, inconclusive}),
		"\n**Gate failed**: 1 threshold crossing(s).\n\n"+line(conclusive)+line(inconclusive); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if got, want := md([]Breach{inconclusive, inconclusive}),
		"\n**Gate indeterminate**: 2 answer(s) the rows cannot settle (the change's interval straddles the limit, or too few requests).\n\n"+line(inconclusive)+line(inconclusive); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
