package vllmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/servers"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// startOllamaHF starts the pinned Ollama with the tiny checkpoint imported from the
// same directory vLLM serves (`ollama create` with FROM .).
func startOllamaHF(t *testing.T, model string) string {
	t.Helper()
	bin := ollamatest.Require(t)
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	host := "127.0.0.1:" + strconv.Itoa(port)
	env := map[string]string{"OLLAMA_HOST": host, "OLLAMA_MODELS": filepath.Join(dir, "models"), "HOME": dir}
	p, err := servers.Start(context.Background(), servers.Spec{
		Name: "ollama", Command: []string{bin, "serve"}, Env: env, Dir: model,
		ReadyURL: "http://" + host + "/api/version", ReadyTimeout: time.Minute,
		Log:   filepath.Join(dir, "ollama.log"),
		Setup: [][]string{{bin, "create", ModelName, "-f", filepath.Join(model, tinymodel.HFModelfileName)}},
	}, servers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	})
	return "http://" + host
}

func postJSON(t *testing.T, url string, body any, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
}

// The same text costs the same number of prompt tokens in both engines: one BOS each
// (Ollama's GGUF says add_bos_token, vLLM's tokenizer.json adds it), then the same
// byte-level BPE pieces. A chat renders through the same template in both (Ollama's
// Modelfile TEMPLATE, vLLM's chat_template) to the same count.
func TestSameTokenCountsInBothEngines(t *testing.T) {
	vllm := Shared(t)
	ollama := startOllamaHF(t, vllm.ModelDir)
	texts := []string{
		"hello world, the model is a fast token server",
		"The quick brown fox, it's 1234 and done!\nNew line.\tTab.",
		"naïve café — 日本語 ok?",
	}
	for i, text := range texts {
		var o struct {
			PromptEvalCount int `json:"prompt_eval_count"`
		}
		postJSON(t, ollama+"/api/generate", map[string]any{"model": ModelName, "prompt": text, "raw": true, "stream": false,
			"options": map[string]any{"num_predict": 1}}, &o)
		var v struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		postJSON(t, vllm.URL+"/v1/completions", map[string]any{"model": ModelName, "prompt": text, "max_tokens": 1}, &v)
		t.Logf("text %d: Ollama prompt_eval_count %d, vLLM usage.prompt_tokens %d", i, o.PromptEvalCount, v.Usage.PromptTokens)
		if o.PromptEvalCount != v.Usage.PromptTokens || o.PromptEvalCount < 2 {
			t.Errorf("text %q: Ollama counts %d prompt tokens, vLLM %d", text, o.PromptEvalCount, v.Usage.PromptTokens)
		}
	}

	msgs := []map[string]string{{"role": "user", "content": "hello there, what is the plan?"}}
	var oc struct {
		PromptEvalCount int `json:"prompt_eval_count"`
	}
	postJSON(t, ollama+"/api/chat", map[string]any{"model": ModelName, "messages": msgs, "stream": false,
		"options": map[string]any{"num_predict": 1}}, &oc)
	var vc struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	postJSON(t, vllm.URL+"/v1/chat/completions", map[string]any{"model": ModelName, "messages": msgs, "max_tokens": 1}, &vc)
	t.Logf("chat: Ollama prompt_eval_count %d, vLLM usage.prompt_tokens %d", oc.PromptEvalCount, vc.Usage.PromptTokens)
	if oc.PromptEvalCount != vc.Usage.PromptTokens {
		t.Errorf("chat: Ollama counts %d prompt tokens, vLLM %d", oc.PromptEvalCount, vc.Usage.PromptTokens)
	}
}
