package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCmd runs planrun with args and returns exit code, stdout and stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin), Getenv: func(string) string { return "" }}
	code := Main(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// Every example validates without a warning, but seed.hcl: convert's plan of the seed's
// own config (TestConvert), whose 5 runs at concurrency 1 cannot bound a median.
func TestValidateExamples(t *testing.T) {
	examples, _ := filepath.Glob("../../examples/*.hcl")
	if len(examples) < 4 {
		t.Fatalf("found %d examples", len(examples))
	}
	warned := map[string]string{"seed.hcl": "Warning: Too few requests to bound the figures"}
	for _, f := range examples {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, out, errs := runCmd(t, "", "validate", f)
			if w := warned[filepath.Base(f)]; w != "" && strings.HasPrefix(out, w) {
				_, rest, _ := strings.Cut(out, "\nSuccess!")
				out = "Success!" + rest
			}
			if code != exitOK || !strings.HasPrefix(out, "Success! The plan is valid: ") {
				t.Errorf("exit %d\n%s%s", code, out, errs)
			}
			if code, _, errs := runCmd(t, "", "fmt", "-check", f); code != exitOK {
				t.Errorf("%s is not formatted: %s", f, errs)
			}
		})
	}
}

func TestValidateReportsEveryMistake(t *testing.T) {
	code, out, errs := runCmd(t, "", "validate", "../../plan/testdata/invalid-files/ten-mistakes.hcl")
	if code != exitError || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if n := strings.Count(errs, "Error: "); n != 10 {
		t.Errorf("%d errors reported, want 10:\n%s", n, errs)
	}
	for _, want := range []string{"ten-mistakes.hcl:4:13", "ten-mistakes.hcl:25:15", `Did you mean "backend.ollama.local"?`, "api_key_env"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func TestPlanCommand(t *testing.T) {
	const f = "../../plan/testdata/valid-files/exclude-include.hcl"
	code, out, errs := runCmd(t, "", "plan", f)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// 7 cells × 3 levels; each level measured 5 runs × level requests = 5 × 21 per cell.
	if !strings.HasSuffix(out, "\nPlan: 7 cells, 21 concurrency levels, 735 measured requests.\n") {
		t.Errorf("total line:\n%s", out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "qwen/qwen2.5-32b/fp8/openai.vllm/rtx5090/short openai.vllm Qwen/Qwen2.5-32B-Instruct-FP8 fp8 rtx5090 short 1,4,16 -") {
		t.Errorf("include row missing:\n%s", out)
	}

	code, out, _ = runCmd(t, "", "plan", "-json", "-only", "qwen/qwen2.5-7b/*", "-except", "*rtx4060*", f)
	var doc struct {
		Cells []struct {
			ID      string
			ModelID string `json:"model_id"`
		}
		Summary struct{ Cells int }
	}
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || doc.Summary.Cells != 2 || len(doc.Cells) != 2 {
		t.Fatalf("exit %d json:\n%s", code, out)
	}
	if code, _, errs := runCmd(t, "", "plan", "-only", "nothing*", f); code != exitUsage || !strings.Contains(errs, "matches no cell") {
		t.Errorf("-only matching nothing: exit %d %s", code, errs)
	}
}

func TestConvertSeed(t *testing.T) {
	code, out, errs := runCmd(t, "", "convert", "../../examples/seed-config.toml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want, err := os.ReadFile("../../examples/seed.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("convert output differs from examples/seed.hcl:\n%s", out)
	}
	for _, s := range []string{`url = "https://taotoken.net/api/v1"`, `api_key_env = "TAOTOKEN_API_KEY"`, `measure = ["ttft", "tpot", "throughput", "vram"]`} {
		if !strings.Contains(out, s) {
			t.Errorf("missing %s", s)
		}
	}
	// -o writes a file that validates.
	dst := filepath.Join(t.TempDir(), "seed.hcl")
	if code, _, errs := runCmd(t, "", "convert", "-o", dst, "../../examples/seed-config.toml"); code != exitOK {
		t.Fatalf("convert -o: %s", errs)
	}
	if code, _, errs := runCmd(t, "", "validate", dst); code != exitOK {
		t.Errorf("converted plan does not validate: %s", errs)
	}
}

func TestConvertOllamaConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	os.WriteFile(cfg, []byte("[server]\nhost = \"127.0.0.1\"\nport = 11434\n[model]\nname = \"qwen2.5:7b\"\n[benchmark]\nmeasure_vram = false\nconcurrency = [1, 4]\n"), 0o644)
	code, out, errs := runCmd(t, "", "convert", cfg)
	if code != exitOK {
		t.Fatal(errs)
	}
	for _, s := range []string{`backend "ollama" "local"`, `url = "http://127.0.0.1:11434"`, `measure = ["ttft", "tpot", "throughput"]`, "concurrency   = [1, 4]"} {
		if !strings.Contains(out, s) {
			t.Errorf("missing %s in\n%s", s, out)
		}
	}
}

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "p.hcl")
	os.WriteFile(f, []byte("workload \"w\" {\nconcurrency=1\n  max_tokens = 2\n}\n"), 0o644)
	code, out, _ := runCmd(t, "", "fmt", "-check", "-diff", dir)
	if code != exitError || !strings.Contains(out, "@@ -1,4 +1,4 @@\n workload \"w\" {\n-concurrency=1\n-  max_tokens = 2\n+  concurrency = 1\n+  max_tokens  = 2\n }\n") {
		t.Errorf("fmt -check: exit %d\n%s", code, out)
	}
	if code, _, errs := runCmd(t, "", "fmt", f); code != exitOK {
		t.Fatal(errs)
	}
	got, _ := os.ReadFile(f)
	if string(got) != "workload \"w\" {\n  concurrency = 1\n  max_tokens  = 2\n}\n" {
		t.Errorf("formatted:\n%s", got)
	}
	if code, _, _ := runCmd(t, "", "fmt", "-check", f); code != exitOK {
		t.Error("formatted file still fails -check")
	}
	if code, _, errs := runCmd(t, "x = {\n", "fmt", "-"); code != exitError || !strings.Contains(errs, "<stdin>") {
		t.Errorf("broken stdin: exit %d %s", code, errs)
	}
}

func TestPlanCommandsHelp(t *testing.T) {
	for _, c := range []string{"validate", "plan", "fmt", "convert"} {
		code, _, errs := runCmd(t, "", c, "-h")
		if code != exitOK || !strings.Contains(errs, "Usage: planrun "+c) {
			t.Errorf("%s -h: exit %d %s", c, code, errs)
		}
	}
	if code, _, _ := runCmd(t, "", "validate"); code != exitUsage {
		t.Errorf("validate without a plan: exit %d", code)
	}
}

// The plans in the README and the docs must stay valid plans.
func TestReadmePlanValidates(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```hcl\n") {
		t.Fatal("the README has no hcl example")
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, path := range append([]string{"../../README.md"}, docs...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, strings.Split(string(b), "```hcl\n")[1:]...)
	}
	for i, b := range blocks {
		src, _, ok := strings.Cut(b, "```")
		if !ok {
			t.Fatalf("hcl block %d is not closed", i+1)
		}
		path := filepath.Join(t.TempDir(), "readme.hcl")
		os.WriteFile(path, []byte(src), 0o644)
		if code, out, errs := runCmd(t, "", "validate", path); code != exitOK {
			t.Errorf("README hcl block %d: exit %d\n%s%s", i+1, code, out, errs)
		}
		// A newcomer copies it and runs fmt -check in CI: it must already be formatted.
		if code, out, errs := runCmd(t, "", "fmt", "-check", "-diff", path); code != exitOK {
			t.Errorf("README hcl block %d fails fmt -check: exit %d\n%s%s", i+1, code, out, errs)
		}
	}
}

// A trace replay's rows are known only once apply reads the trace: plan says so rather
// than counting its requests as 0, and shows the replay in the concurrency column.
func TestPlanCommandTraceReplay(t *testing.T) {
	code, out, errs := runCmd(t, "", "plan", "../../examples/trace-replay.hcl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasSuffix(out, "\nPlan: 1 cell, 1 concurrency level, 0 measured requests, plus the rows of 1 trace replay, counted when apply reads the trace.\n") ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), " replay replay - this machine -") {
		t.Errorf("plan output:\n%s", out)
	}
}

// plan shows a workload's model mix, each name with its share, in the table's output and
// in -json.
func TestPlanShowsModelMix(t *testing.T) {
	const f = "../../examples/vllm-lora.hcl"
	code, out, errs := runCmd(t, "", "plan", f)
	if code != exitOK || !strings.Contains(out, "\n  lora-mix: tiny 50%, tiny-lora-a 25%, tiny-lora-b 25%\n") {
		t.Errorf("exit %d, stdout:\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd(t, "", "plan", "-json", f)
	var doc struct {
		Cells []struct {
			Models map[string]float64 `json:"models"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != exitOK || err != nil || len(doc.Cells) != 1 ||
		doc.Cells[0].Models["tiny"] != 50 || doc.Cells[0].Models["tiny-lora-b"] != 25 || len(doc.Cells[0].Models) != 3 {
		t.Errorf("exit %d, %v: %+v", code, err, doc.Cells)
	}
	if _, out, _ := runCmd(t, "", "plan", "../../examples/quickstart.hcl"); strings.Contains(out, "Model mixes") {
		t.Errorf("a plan without a mix lists mixes:\n%s", out)
	}
}

// planrun plan lists each cell's quality phase: the reference gathers, the others name
// the cell they are compared with.
func TestPlanShowsQuality(t *testing.T) {
	code, out, errs := runCmd(t, "", "plan", "../../examples/quickstart.hcl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"\nQuality (a phase of its own before the cell's levels, one request at a time, greedy):\n",
		"  cpu1/tiny-25m/f16/ollama.native/cpu1/quick: the reference: gathers its continuations and reruns itself; 12 built-in prompts of 12 words × 12 tokens",
		"  cpu1/tiny-25m/q4_K_M/ollama.native/cpu1/quick: against cpu1/tiny-25m/f16/ollama.native/cpu1/quick;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "cpu2/tiny-25m/q4_K_M/ollama.native/cpu2/quick: ") {
		t.Errorf("a cell without a quality block is listed:\n%s", out)
	}
}
