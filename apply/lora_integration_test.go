package apply

// Against the real vLLM with two tiny LoRA adapters (internal/testkit/vllmtest's SharedLoRA:
// tinymodel's adapters of the tiny checkpoint, --enable-lora --lora-modules): a model
// mix over the base model and both adapters runs end to end, each name gets its share,
// every request is answered by the name it was sent to, and the row gives each name's
// figures; a mix naming an adapter vLLM was not started with fails at its plan line
// with only the probe sent. And a Responses-API cell runs end to end on the plain server.

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/gatewaytest"
	"github.com/planrun/planrun/internal/testkit/vllmtest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/telemetry/gpu"
)

const loraMixPlan = `
variable "url" { type = string }
variable "adapter" {
  type    = string
  default = "tiny-lora-b"
}
backend "openai" "vllm" {
  url               = "${var.url}/v1"
  api               = "chat"
  engine_extensions = true
}
workload "lora" {
  prompt_tokens = 16
  max_tokens    = 8
  concurrency   = [4]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 24
  temperature   = 0
  seed          = 11
  models        = { "tiny" = 2, "tiny-lora-a" = 1, (var.adapter) = 1 }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  workload = [workload.lora]
  model_id = "tiny"
}
`

// vllmModels is vLLM's /v1/models: each id with its parent (an adapter's base model).
func vllmModels(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID     string  `json:"id"`
			Parent *string `json:"parent"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range list.Data {
		out[m.ID] = ""
		if m.Parent != nil {
			out[m.ID] = *m.Parent
		}
	}
	return out
}

// sentModels counts the workload's chat requests a tap passed to vLLM (those of its
// max_tokens 8: the probe asks for 2, prompt calibration for 1) by their model field,
// and checks each answer names the model it was asked for.
func sentModels(t *testing.T, tap *gatewaytest.Tap) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, ex := range tap.Exchanges() {
		if !strings.HasSuffix(ex.Path, "/chat/completions") {
			continue
		}
		var body struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
		}
		if err := json.Unmarshal(ex.Body, &body); err != nil {
			t.Fatalf("request %s: %v", ex.Body, err)
		}
		if body.MaxTokens != 8 {
			continue // the probe's test request, or a calibration request
		}
		n[body.Model]++
		if ex.Status != http.StatusOK || !strings.Contains(string(ex.Response), `"model":"`+body.Model+`"`) {
			t.Errorf("a request for %s: status %d, answered %.200s", body.Model, ex.Status, ex.Response)
		}
	}
	return n
}

func TestRealVLLMLoRAMix(t *testing.T) {
	s := vllmtest.SharedLoRA(t)
	listed := vllmModels(t, s.URL)
	for _, name := range vllmtest.LoRANames {
		if parent, ok := listed[name]; !ok || parent != s.Model {
			t.Fatalf("/v1/models lists %v: want %s with parent %s", listed, name, s.Model)
		}
	}
	tap := gatewaytest.NewTap(t, s.URL)
	p, cells := loadPlan(t, loraMixPlan, tap.URL)
	res, recs := runSamples(t, p, cells)
	if len(res.Rows) != 1 || res.Rows[0].Status != ledger.StatusOK || res.Rows[0].Failed != 0 {
		t.Fatalf("rows %+v", res.Rows)
	}
	row := res.Rows[0]
	sent := sentModels(t, tap)
	t.Logf("vLLM got, by model: %v; row: %d requests, TTFT p50 %.4fs", sent, row.Requests, row.TTFT.P50)
	if len(row.Models) != 3 {
		t.Fatalf("per-model figures %+v, want the 3 names", row.Models)
	}
	total := 0
	for _, m := range row.Models {
		t.Logf("%s: %d requests, TTFT p50 %.4fs p99 %.4fs, TPOT p50 %.2fms, E2E p50 %.4fs, %d tokens", m.Name, m.Requests,
			m.TTFT.P50, m.TTFT.P99, m.TPOT.P50*1000, m.E2E.P50, m.OutputTokens)
		total += m.Requests
		// Every name got requests, exactly as many as vLLM was sent, each answered with
		// the server's own count of max_tokens (ignore_eos).
		if m.Requests == 0 || m.Requests != sent[m.Name] || m.Failed != 0 || m.OutputTokens != 8*m.Requests ||
			!(m.TTFT.P50 > 0) || !(m.TPOT.P50 > 0) || !(m.E2E.P99 >= m.E2E.P50) {
			t.Errorf("%s: %+v; vLLM was sent %d", m.Name, m, sent[m.Name])
		}
	}
	if total != row.Requests || total != len(recs) || row.OutputTokens != 8*total || row.TokenSource != "usage" {
		t.Errorf("row: %d requests, %d output tokens (%s); names sum to %d, %d records", row.Requests, row.OutputTokens,
			row.TokenSource, total, len(recs))
	}
	checkAdaptersDiffer(t, s)

	// A mix naming an adapter vLLM does not serve fails at its plan line; only the
	// probe reaches vLLM.
	path := writePlan(t, loraMixPlan)
	absentTap := gatewaytest.NewTap(t, s.URL)
	p, cells = loadPlanFile(t, path, "url="+absentTap.URL, "adapter=tiny-lora-x")
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true,
		ResultsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := path + ":" + strconv.Itoa(planLine(t, loraMixPlan, "models ")) + `: workload "lora"'s models name "tiny-lora-x": model "tiny-lora-x" is not served`
	if len(res.Cells) != 1 || res.Cells[0].Status != ledger.StatusFailed || !strings.Contains(res.Cells[0].Notes, want) ||
		!strings.Contains(res.Cells[0].Notes, "tiny-lora-a") {
		t.Fatalf("cells %+v, want failed with %q and the server's list", res.Cells, want)
	}
	t.Logf("absent adapter: %s", res.Cells[0].Notes)
	if b, err := os.ReadFile(filepath.Join(res.RunDir, "requests.jsonl")); len(b) > 0 {
		t.Errorf("requests recorded for a cell refused before sending (%v):\n%s", err, b)
	}
	var generations []string
	for _, ex := range absentTap.Exchanges() {
		if strings.HasSuffix(ex.Path, "completions") {
			generations = append(generations, string(ex.Body))
		}
	}
	if len(generations) > 1 || slices.ContainsFunc(generations, func(b string) bool { return !strings.Contains(b, `"max_tokens":2`) }) {
		t.Errorf("vLLM got %d generation requests, want at most the probe's: %v", len(generations), generations)
	}
}

// checkAdaptersDiffer: greedy decoding of one prompt gives a different answer from each
// adapter and from the base model, so the server really applied them.
func checkAdaptersDiffer(t *testing.T, s *vllmtest.Server) {
	t.Helper()
	answers := map[string]string{}
	for _, m := range append([]string{s.Model}, vllmtest.LoRANames...) {
		var out struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		b, _ := json.Marshal(map[string]any{"model": m, "prompt": "hello world the", "max_tokens": 8, "temperature": 0})
		resp, err := http.Post(s.URL+"/v1/completions", "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || len(out.Choices) != 1 {
			t.Fatalf("%s: %v %+v", m, err, out)
		}
		for other, a := range answers {
			if a == out.Choices[0].Text {
				t.Errorf("%s and %s answered the same %q: the adapter changed nothing", m, other, a)
			}
		}
		answers[m] = out.Choices[0].Text
	}
}

const vllmResponsesPlan = `
variable "url" { type = string }
backend "openai" "vllm" {
  url               = "${var.url}/v1"
  api               = "responses"
  engine_extensions = true
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 12
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 2
  requests      = 8
  temperature   = 0
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  workload = [workload.w]
  model_id = "tiny"
}
`

// A Responses-API cell runs end to end on the real vLLM: every request of both levels
// goes to /v1/responses, streamed, and the rows count the server's own usage.
func TestRealVLLMResponsesCell(t *testing.T) {
	s := vllmtest.Shared(t)
	tap := gatewaytest.NewTap(t, s.URL)
	p, cells := loadPlan(t, vllmResponsesPlan, tap.URL)
	res, recs := runSamples(t, p, cells)
	if len(res.Rows) != 2 {
		t.Fatalf("rows %+v", res.Rows)
	}
	for _, row := range res.Rows {
		t.Logf("c=%d: %d requests, TTFT p50 %.4fs, TPOT p50 %.2fms, E2E p50 %.4fs, %d tokens (%s)", row.Concurrency,
			row.Requests, row.TTFT.P50, row.TPOT.P50*1000, row.E2E.P50, row.OutputTokens, row.TokenSource)
		if row.Status != ledger.StatusOK || row.Requests != 16 || row.Failed != 0 || row.OutputTokens != 16*12 ||
			row.TokenSource != "usage" || !(row.TTFT.P50 > 0) || !(row.TPOT.P50 > 0) || !(row.E2E.P50 > row.TTFT.P50) {
			t.Errorf("c=%d: %s, %d requests (%d failed), %d tokens (%s), TTFT %v TPOT %v E2E %v; notes %q", row.Concurrency,
				row.Status, row.Requests, row.Failed, row.OutputTokens, row.TokenSource, row.TTFT.P50, row.TPOT.P50, row.E2E.P50, row.Notes)
		}
	}
	responses := 0
	for _, ex := range tap.Exchanges() {
		var body struct {
			MaxOutputTokens int  `json:"max_output_tokens"`
			Stream          bool `json:"stream"`
		}
		switch {
		case strings.HasSuffix(ex.Path, "/v1/responses"):
			if err := json.Unmarshal(ex.Body, &body); err != nil || body.MaxOutputTokens != 12 {
				continue // the probe's test request (2 tokens), or a calibration request (1)
			}
			responses++
			if !body.Stream || ex.Status != http.StatusOK || !strings.Contains(string(ex.Response), "response.completed") {
				t.Errorf("a Responses request: %s answered %d %.300s", ex.Body, ex.Status, ex.Response)
			}
		case strings.HasSuffix(ex.Path, "completions"):
			t.Errorf("a request went to %s, not /v1/responses: %s", ex.Path, ex.Body)
		}
	}
	// 2 levels × (1 warm-up + 2 measured runs) × 8 requests.
	if len(recs) != 32 || responses != 48 {
		t.Errorf("%d measured records, %d workload requests to /v1/responses; want 32 and 48", len(recs), responses)
	}
}
