package apply

// A plan whose server block starts the real LiteLLM proxy in front of the real Ollama,
// measured with the taotoken backend (the strict profile): a requests-per-minute limit
// on one model name yields 429s that are counted by class while the run goes on, and the
// one key, read from the environment, appears in no file of the run.

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/gatewaytest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
)

const gatewayPlan = `
variable "url" { type = string }
variable "litellm" { type = string }
variable "config" { type = string }
variable "port" { type = number }
variable "log" { type = string }

server "gateway" {
  command = [var.litellm, "--config", var.config, "--host", "127.0.0.1", "--port", "${var.port}"]
  env     = { LITELLM_LOCAL_MODEL_COST_MAP = "True" } # never fetch the cost map from the internet
  ready {
    url     = "http://127.0.0.1:${var.port}/health/liveliness"
    timeout = "120s"
  }
  log = var.log
}

backend "taotoken" "gw" {
  url         = "http://127.0.0.1:${var.port}/v1"
  api_key_env = "PLANRUN_APPLY_GATEWAY_KEY"
  server      = server.gateway
}

workload "w" {
  prompt      = "hello world, the model"
  max_tokens  = 4
  concurrency = [1]
  warmup_runs = 0
  repeat_runs = 1
  requests    = 8
  temperature = 0
  seed        = 42
}

matrix "gw" {
  model    = ["tiny-limited", "tiny"]
  tool     = [backend.taotoken.gw]
  workload = [workload.w]
  model_id = matrix.model
}

output "csv" { path = "results/results.csv" }
output "markdown" { path = "results/results.md" }
`

func TestGatewayApplyRateLimitAndKey(t *testing.T) {
	s := realOllama(t)
	bin := gatewaytest.Require(t)
	const key = "sk-apply-gw-3d9e51c0a7-secret"
	t.Setenv("PLANRUN_APPLY_GATEWAY_KEY", key)
	dir := t.TempDir()
	const rpm = 3
	cfg, err := gatewaytest.WriteConfig(dir, gatewaytest.Options{
		KeyEnv:   "PLANRUN_APPLY_GATEWAY_KEY",
		ModelRPM: map[string]int{"tiny-limited": rpm},
		Routes: []gatewaytest.Route{
			{Name: "tiny-limited", APIBase: s.URL + "/v1", Model: s.Model},
			{Name: "tiny", APIBase: s.URL + "/v1", Model: s.Model},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	planDir := t.TempDir()
	planPath := filepath.Join(planDir, "plan.hcl")
	if err := os.WriteFile(planPath, []byte(gatewayPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(planDir, "litellm.log")
	p, cells := loadPlanFile(t, planPath, "url="+s.URL, "litellm="+bin, "config="+cfg, "port="+strconv.Itoa(port), "log="+logPath)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows, want one per model name", len(res.Rows))
	}
	limited, free := res.Rows[0], res.Rows[1]
	t.Logf("tiny-limited: %s, %d ok, %d failed %v; tiny: %s, %d ok, %d failed %v",
		limited.Status, limited.Succeeded, limited.Failed, limited.Failures, free.Status, free.Succeeded, free.Failed, free.Failures)
	// The probe's usage check may take one of the minute's requests, so at most rpm succeed.
	if limited.Succeeded < 1 || limited.Succeeded > rpm || limited.Failures["429"] != 8-limited.Succeeded || limited.Failed != limited.Failures["429"] {
		t.Errorf("tiny-limited (%d requests a minute): %d ok, failures %v; want the rest of 8 failed as 429", rpm, limited.Succeeded, limited.Failures)
	}
	// The run goes on: the other model name behind the same key is not limited.
	if free.Succeeded != 8 || free.Failed != 0 {
		t.Errorf("tiny after the limited cell: %d ok, failures %v; want 8 ok", free.Succeeded, free.Failures)
	}
	// The gateway sends its usage chunk and [DONE] after the last token: the request is in
	// flight until then, so the one slot was busy all along and the row delivered its 1.
	// (A client saturated by a loaded machine is still client-bound, by its own check,
	// and one whose slot stalled between requests is late, by its turnaround: neither
	// is the shortfall this checks.)
	t.Logf("tiny: held %.3f in flight, idle %.4f, fidelity %s (%.2f%% short); notes %q", free.InFlightHeld, free.InFlightIdle, free.Fidelity, free.FidelityShortfallPct, free.Notes)
	saturated := free.Fidelity == ledger.FidelityClientBound && !strings.Contains(free.Notes, "fidelity client-bound: delivered")
	if !(free.FidelityShortfallPct <= 5) || (free.Fidelity != ledger.FidelityOK && free.Fidelity != ledger.FidelityLate && !saturated) {
		t.Errorf("tiny through the gateway at concurrency 1: fidelity %q, %.2f%% short (held %.3f in flight); notes %q",
			free.Fidelity, free.FidelityShortfallPct, free.InFlightHeld, free.Notes)
	}
	var tail time.Duration // the longest from a last token to its body's end
	for _, r := range readSamples(t, res.RunDir) {
		if r.BodyEnd < r.End {
			t.Errorf("%s %s: body end %v before the last token %v", r.CellID, r.ID, r.BodyEnd, r.End)
		}
		if r.OK() {
			tail = max(tail, r.BodyEnd-r.End)
		}
		if !r.OK() && (r.Err.Class != "429" || r.Err.RetryAfter == "") {
			t.Errorf("%s %s: %v (retry after %q), want a 429 with the gateway's Retry-After", r.CellID, r.ID, r.Err, r.Err.RetryAfter)
		}
	}

	t.Logf("the longest tail after a last token: %v", tail)

	// The key is in no output: run directory, ledger, report, the gateway's log.
	for _, root := range []string{res.RunDir, planDir} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(key)) {
				t.Errorf("%s contains the key", path)
			}
			return nil
		})
	}
	if _, err := os.Stat(logPath); err != nil {
		t.Errorf("the gateway's log was not written: %v", err)
	}
}
