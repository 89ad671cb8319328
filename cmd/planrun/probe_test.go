package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends/backendtest"
	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/testkit/slurmtest"
	"github.com/planrun/planrun/servers/mockserver"
)

// probePlan has an Ollama-protocol and an OpenAI-protocol backend on one server, and a
// model id set per test.
const probePlan = `
variable "url" { type = string }
variable "model_id" { type = string }
backend "ollama" "local" { url = var.url }
backend "openai" "vllm" {
  url         = "${var.url}/v1"
  api_key_env = "PROBE_TEST_KEY"
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 8
  concurrency   = [1]
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.ollama.local, backend.openai.vllm]
  workload = [workload.w]
  model_id = var.model_id
}
`

// runProbeCmd writes probePlan and runs `planrun probe` on it with env as the process
// environment.
func runProbeCmd(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.hcl")
	if err := os.WriteFile(path, []byte(probePlan), 0o644); err != nil {
		t.Fatal(err)
	}
	return runWithEnv(env, append(append([]string{"probe"}, args...), path)...)
}

// runWithEnv runs planrun with args and env as the process environment.
func runWithEnv(env map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	e := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(k string) string { return env[k] }}
	code = Main(context.Background(), e, args)
	return code, out.String(), errb.String()
}

const probeKey = "sk-probe-secret-1234"

func TestProbeMockServer(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{Models: []string{"tiny", "other-a", "other-b", "other-c"}, APIKey: probeKey}))
	defer srv.Close()
	withKey := map[string]string{"PROBE_TEST_KEY": probeKey}

	tests := []struct {
		name     string
		env      map[string]string
		model    string
		code     int
		want     []string // substrings of stdout
		wantNone []string
	}{
		{"happy path", withKey, "tiny", exitOK,
			[]string{"ollama.local", "openai.vllm", srv.URL + "/v1", mockserver.Version(), "4 (tiny, other-a, other-b, …)", "tiny present",
				"Probe passed: 2 of 2 backends ready."},
			[]string{"MISSING", "Problems:"}},
		{"missing model", withKey, "qwen2.5:7b", exitError,
			[]string{"qwen2.5:7b MISSING", `ollama.local: model "qwen2.5:7b" is not served at ` + srv.URL + "; the server has: tiny, other-a, other-b, other-c",
				"openai.vllm: model \"qwen2.5:7b\"", "Probe failed: 0 of 2 backends ready."},
			[]string{"present"}},
		{"wrong key", map[string]string{"PROBE_TEST_KEY": "sk-wrong-key-5678"}, "tiny", exitError,
			[]string{"openai.vllm: ", "Authorization: Bearer", "PROBE_TEST_KEY", "Probe failed: 1 of 2 backends ready."},
			[]string{"sk-wrong-key-5678"}},
		{"missing key", nil, "tiny", exitError,
			[]string{"PROBE_TEST_KEY", "Probe failed: 1 of 2 backends ready."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runProbeCmd(t, tt.env, "-var", "url="+srv.URL, "-var", "model_id="+tt.model)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range append(tt.wantNone, probeKey) {
				if strings.Contains(out+errs, w) {
					t.Errorf("output contains %q:\n%s%s", w, out, errs)
				}
			}
		})
	}
}

func TestProbeRefusedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now

	withKey := map[string]string{"PROBE_TEST_KEY": probeKey}
	code, out, errs := runProbeCmd(t, withKey, "-json", "-var", "url="+url, "-var", "model_id=tiny")
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	var doc probeReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-json output: %v\n%s%s", err, out, errs)
	}
	if doc.OK || len(doc.Backends) != 2 {
		t.Fatalf("ok %v, %d backends:\n%s", doc.OK, len(doc.Backends), out)
	}
	for _, b := range doc.Backends {
		if b.Reachable || b.OK() || len(b.Problems) == 0 || !strings.Contains(b.Problems[0], "is the server running") ||
			!strings.Contains(b.Problems[0], strings.TrimPrefix(url, "http://")) {
			t.Errorf("%s: reachable %v, problems %q: want refused, naming the address", b.Backend, b.Reachable, b.Problems)
		}
	}

	code, out, _ = runProbeCmd(t, withKey, "-var", "url="+url, "-var", "model_id=tiny")
	if code != exitError || !strings.Contains(out, "Probe failed: 0 of 2 backends ready.") || strings.Count(out, " no ") < 2 ||
		strings.Count(out, "tiny ?") != 2 || strings.Contains(out, probeKey) {
		t.Errorf("exit %d, table:\n%s", code, out)
	}

	// A backend whose server the plan manages: probe does not start it, and says so.
	port := strings.TrimPrefix(url, "http://127.0.0.1:")
	code, out, errs = runWithEnv(nil, "probe", "-only", "*openai*", "-var", "port="+port, "../../plan/testdata/valid-files/servers.hcl")
	if code != exitError || !strings.Contains(out, `managed by the plan (server "vllm_awq"): apply starts it, probe does not`) ||
		strings.Contains(out, "ollama.local") {
		t.Errorf("plan-managed server: exit %d\n%s%s", code, out, errs)
	}
}

// A server that streams no usage: output tokens would be counted by chunks, so the
// probe fails and says why.
func TestProbeNoUsage(t *testing.T) {
	sse, err := os.ReadFile("../../backends/openai/testdata/quirks_no_usage_no_done.sse")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"tiny","object":"model"}]}`)
	})
	mux.Handle("POST /v1/chat/completions", &backendtest.Stream{ContentType: "text/event-stream", Parts: [][]byte{sse}})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	code, out, errs := runProbeCmd(t, map[string]string{"PROBE_TEST_KEY": probeKey}, "-only", "*openai*", "-var", "url="+srv.URL, "-var", "model_id=tiny")
	if code != exitError || !strings.Contains(out, "tiny present") || !strings.Contains(out, "token_source = chunks") ||
		!strings.Contains(out, "Probe failed: 0 of 1 backends ready.") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	if fields := strings.Fields(strings.Split(out, "\n")[1]); fields[len(fields)-1] != "no" {
		t.Errorf("USAGE column %q, want no:\n%s", fields[len(fields)-1], out)
	}
}

func TestProbeSelection(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{Models: []string{"tiny"}}))
	defer srv.Close()
	// -only keeps the ollama cell: the openai backend (whose key is unset) is not probed.
	code, out, errs := runProbeCmd(t, nil, "-json", "-only", "*ollama*", "-var", "url="+srv.URL, "-var", "model_id=tiny")
	var doc probeReport
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Backends) != 1 || doc.Backends[0].Backend != "ollama.local" {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if d := doc.Backends[0].ModelDigests["tiny"]; d == "" {
		t.Errorf("no digest for tiny from the mock's /api/tags: %+v", doc.Backends[0])
	}
	if code, _, errs := runProbeCmd(t, nil, "-only", "nothing*", "-var", "url="+srv.URL, "-var", "model_id=tiny"); code != exitUsage {
		t.Errorf("-only matching nothing: exit %d, %s", code, errs)
	}
	if code, _, _ := runProbeCmd(t, nil, "-h"); code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
}

func TestMain(m *testing.M) {
	code := ollamatest.Main(m)
	slurmtest.Release() // the Slurm tests' cluster, if this process was the last to use it
	os.Exit(code)
}

// realOllama is the test binary's real Ollama (the pinned Ollama with the tiny model).
func realOllama(t *testing.T) *ollamatest.Server { return ollamatest.Shared(t) }

func TestProbeRealOllama(t *testing.T) {
	s := realOllama(t)
	// Ollama's /v1 ignores the key, so any value passes.
	code, out, errs := runProbeCmd(t, map[string]string{"PROBE_TEST_KEY": probeKey}, "-json", "-var", "url="+s.URL, "-var", "model_id="+s.Model)
	t.Logf("probe of the real Ollama:\n%s", out)
	var doc probeReport
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || !doc.OK || len(doc.Backends) != 2 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	for _, b := range doc.Backends {
		if b.Version != ollamatest.PinnedVersion || !b.ModelsPresent[s.Model] || b.UsageReported == nil || !*b.UsageReported {
			t.Errorf("%s: version %q, present %v, usage %v", b.Backend, b.Version, b.ModelsPresent, b.UsageReported)
		}
	}
	if doc.Backends[0].Backend != "ollama.local" || doc.Backends[0].ModelDigests[s.Model] == "" {
		t.Errorf("the ollama backend must report the model digest: %+v", doc.Backends[0])
	}
	if strings.Contains(out+errs, probeKey) {
		t.Error("the API key was printed")
	}

	code, out, _ = runProbeCmd(t, nil, "-var", "url="+s.URL, "-var", "model_id=no-such-model")
	if code != exitError || !strings.Contains(out, "no-such-model MISSING") || !strings.Contains(out, "the server has: tiny:latest") {
		t.Errorf("missing model on the real server: exit %d\n%s", code, out)
	}
}
