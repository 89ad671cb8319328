package apply

import (
	"encoding/csv"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

// costPlan measures a gateway with a price list (the mock, behind the taotoken kind's
// strict profile and key) on a rented machine priced by the hour.
const costPlan = `
variable "url" { type = string }
backend "taotoken" "gw" {
  url         = "${var.url}/v1"
  api_key_env = "PLANRUN_COST_TEST_KEY"
  price {
    input_per_mtok  = 2.5
    output_per_mtok = 10
    currency        = "CNY"
  }
}
hardware "rented" {
  price {
    per_hour = 7.2
    currency = "CNY"
  }
}
workload "w" {
  prompt_tokens = 24
  max_tokens    = 8
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 2
  requests      = 4
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.taotoken.gw]
  hardware = [hardware.rented]
  workload = [workload.w]
}
decision "cheapest" {
  objective = minimize(result.cost_per_mtok)
}
`

// TestGatewayCost: every row of a priced plan has its cost per million output tokens,
// equal to a recompute from the row's own CSV figures (the token prices with the input
// tokens sent per output token, plus the hour's price over the tokens an hour makes at
// the row's throughput), in the plan's currency, with the interval of the throughput it
// depends on; and a decision can minimize it.
func TestGatewayCost(t *testing.T) {
	const key = "sk-cost-test"
	t.Setenv("PLANRUN_COST_TEST_KEY", key)
	hs := httptest.NewServer(mockserver.New(mockserver.Config{APIKey: key, TTFT: 5 * time.Millisecond, TPOT: 2 * time.Millisecond}))
	defer hs.Close()
	p, cells := loadPlan(t, costPlan, hs.URL)
	res, _ := runSamples(t, p, cells)
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(res.Rows))
	}
	f, err := os.Open(filepath.Join(res.RunDir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("run CSV: %d records, %v", len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	num := func(rec []string, name string) float64 {
		i, ok := col[name]
		if !ok {
			t.Fatalf("no column %s", name)
		}
		v, err := strconv.ParseFloat(rec[i], 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	for _, rec := range recs[1:] {
		if rec[col["currency"]] != "CNY" || rec[col["status"]] != ledger.StatusOK {
			t.Errorf("row %s: currency %q, status %q", rec[col["cell_id"]], rec[col["currency"]], rec[col["status"]])
		}
		in := num(rec, "prompt_tokens_actual") * num(rec, "succeeded")
		out := num(rec, "output_tokens")
		want := (2.5*in+10*out)/out + 7.2/(num(rec, "output_tok_s")*3600/1e6)
		if got := num(rec, "cost_per_mtok"); math.Abs(got-want) > 1e-6*want || math.IsNaN(got) {
			t.Errorf("row c%s: cost_per_mtok %v, recomputed from the row %v", rec[col["concurrency"]], got, want)
		}
		// The interval moves with throughput's: a slower end costs more. Two runs cannot
		// bound throughput at 95%, so neither end is known.
		if lo, hi := rec[col["cost_per_mtok_lo"]], rec[col["cost_per_mtok_hi"]]; lo != "" || hi != "" {
			t.Errorf("cost interval [%s, %s] from two runs, want unbounded as throughput's is", lo, hi)
		}
	}
	d := res.Decisions[0]
	if d.Chosen == nil || d.Objective.Field != "cost_per_mtok" || d.RunnerUp == nil {
		t.Fatalf("decision %+v", d)
	}
	if cheapest := math.Min(res.Rows[0].CostPerMTok, res.Rows[1].CostPerMTok); float64(d.Chosen.Value) != cheapest {
		t.Errorf("chose %v per Mtok, the cheaper row is %v", d.Chosen.Value, cheapest)
	}
}
