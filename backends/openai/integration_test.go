package openai

// Integration tests against a real OpenAI-compatible server: the pinned Ollama's /v1 serving
// the tiny model. The adapter's token count must equal usage.completion_tokens, which
// the test reads itself from the raw stream of the same request.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/testkit/vllmtest"
)

// One real Ollama and one real vLLM per test binary, each started by the first test
// that needs it and stopped here.
func TestMain(m *testing.M) {
	code := ollamatest.Main(m)
	if err := vllmtest.StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "vllmtest:", err)
		code = 1
	}
	os.Exit(code)
}

// realOllama is the test binary's real Ollama (the pinned Ollama with the tiny model).
func realOllama(t *testing.T) *ollamatest.Server { return ollamatest.Shared(t) }

// rawUsage is what the server's own stream says, read without the adapter's decoder.
type rawUsage struct {
	CompletionTokens int `json:"completion_tokens"`
	PromptTokens     int `json:"prompt_tokens"`
	chunks           int // data events carrying content
	done             bool
}

// rawStream POSTs body (the adapter's own request body) with net/http and reads usage
// from the SSE stream with a scanner of its own.
func rawStream(t *testing.T, url string, body []byte) rawUsage {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("raw POST %s: %s", url, resp.Status)
	}
	var u rawUsage
	sawUsage := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			u.done = true
			continue
		}
		var ev struct {
			Choices []struct {
				Text  string `json:"text"`
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *rawUsage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("raw SSE data %q: %v", data, err)
		}
		for _, c := range ev.Choices {
			if c.Text != "" || c.Delta.Content != "" {
				u.chunks++
			}
		}
		if ev.Usage != nil {
			sawUsage = true
			u.CompletionTokens, u.PromptTokens = ev.Usage.CompletionTokens, ev.Usage.PromptTokens
		}
	}
	if !sawUsage {
		t.Fatalf("raw %s: the server sent no usage chunk", url)
	}
	return u
}

func TestRealOllamaV1(t *testing.T) {
	s := realOllama(t)
	temp := 0.0
	seed := int64(42)
	for _, tt := range []struct{ api, path string }{{"chat", "/chat/completions"}, {"completions", "/completions"}} {
		t.Run(tt.api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "openai.real", URL: s.URL + "/v1", API: tt.api})
			req := backends.Request{ID: "real/" + tt.api, Model: s.Model, Prompt: "hello world, the model",
				MaxTokens: 16, ForceMaxTokens: true, Temperature: &temp, Seed: &seed}
			got := b.Do(context.Background(), req)
			if !got.OK() {
				t.Fatalf("request failed: %v", got.Err)
			}
			body, err := b.Body(req)
			if err != nil {
				t.Fatal(err)
			}
			raw := rawStream(t, s.URL+"/v1"+tt.path, body)
			ttft, _ := got.TTFT()
			tpot, tpotOK := got.TPOT()
			t.Logf("/v1%s: output tokens %d (raw usage.completion_tokens %d), %d content chunks (raw %d), prompt tokens %d (raw %d), TTFT %v, TPOT %v, E2E %v, finish %q",
				tt.path, got.OutputTokens, raw.CompletionTokens, got.Chunks, raw.chunks, got.PromptTokens, raw.PromptTokens,
				ttft, tpot, got.E2E(), got.FinishReason)

			if got.TokenSource != backends.TokensUsage {
				t.Errorf("token source %q, want %q: Ollama's /v1 sends usage with include_usage", got.TokenSource, backends.TokensUsage)
			}
			if got.OutputTokens != raw.CompletionTokens || got.OutputTokens < 2 || got.OutputTokens > req.MaxTokens {
				t.Errorf("output tokens %d, the server's usage.completion_tokens %d (max %d)", got.OutputTokens, raw.CompletionTokens, req.MaxTokens)
			}
			if got.PromptTokens <= 0 || got.PromptTokens != raw.PromptTokens {
				t.Errorf("prompt tokens %d, the server's usage.prompt_tokens %d", got.PromptTokens, raw.PromptTokens)
			}
			if got.Chunks < 1 || got.Chunks > got.OutputTokens || len(got.ChunkArrivals) != got.Chunks {
				t.Errorf("%d chunks (%d arrivals) for %d tokens: chunks are counted apart, at least one token each",
					got.Chunks, len(got.ChunkArrivals), got.OutputTokens)
			}
			if ttft <= 0 || ttft >= got.E2E() {
				t.Errorf("TTFT %v, E2E %v: want 0 < TTFT < E2E", ttft, got.E2E())
			}
			if !tpotOK || tpot <= 0 {
				t.Errorf("TPOT %v (defined %v) with %d tokens", tpot, tpotOK, got.OutputTokens)
			}
			if got.TextBytes == 0 || got.FinishReason == "" {
				t.Errorf("text bytes %d, finish reason %q", got.TextBytes, got.FinishReason)
			}
		})
	}
}

func TestRealOllamaV1UnknownModel(t *testing.T) {
	s := realOllama(t)
	b := mustNew(t, backends.Config{Name: "openai.real", URL: s.URL + "/v1"})
	got := b.Do(context.Background(), backends.Request{ID: "real/missing", Model: "no-such-model", Prompt: "hi", MaxTokens: 2})
	if got.Err == nil {
		t.Fatalf("a request for an unknown model succeeded: %+v", got)
	}
	t.Logf("unknown model: %v", got.Err)
	if got.Err.Class != backends.ErrNotFound || got.Err.Status != http.StatusNotFound {
		t.Errorf("class %q status %d, want 404", got.Err.Class, got.Err.Status)
	}
	if !strings.Contains(got.Err.Message, "no-such-model") || !strings.Contains(got.Err.Message, s.Model) {
		t.Errorf("message %q must name the missing model and list the server's (%s)", got.Err.Message, s.Model)
	}
}

func TestRealOllamaV1Probe(t *testing.T) {
	s := realOllama(t)
	r := mustNew(t, backends.Config{Name: "openai.real", URL: s.URL + "/v1"}).Probe(context.Background(), []string{s.Model})
	t.Logf("probe: %+v", r)
	if !r.OK() || r.Version != ollamatest.PinnedVersion || !r.ModelsPresent[s.Model] {
		t.Errorf("probe of Ollama's /v1: ok %v, version %q (want %s from /api/version), present %v, problems %q",
			r.OK(), r.Version, ollamatest.PinnedVersion, r.ModelsPresent, r.Problems)
	}
	if r.UsageReported == nil || !*r.UsageReported {
		t.Errorf("usage reported %v: Ollama's /v1 sends usage with include_usage", r.UsageReported)
	}
}

// stream = false on Ollama's /v1: the whole chat.completion is decoded once, with usage.
// Greedy and seeded like TestRealOllamaV1: at the server's default temperature the tiny
// model's random weights sometimes stop after tokens that decode to no text.
func TestRealOllamaV1NonStreamed(t *testing.T) {
	s := realOllama(t)
	temp, seed := 0.0, int64(42)
	for _, api := range []string{"chat", "completions"} {
		t.Run(api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "openai.real", URL: s.URL + "/v1", API: api})
			got := b.Do(context.Background(), backends.Request{ID: "real/whole", Model: s.Model, Prompt: "hello world, the model",
				MaxTokens: 16, NoStream: true, Temperature: &temp, Seed: &seed})
			if !got.OK() {
				t.Fatalf("request failed: %v", got.Err)
			}
			_, ttftOK := got.TTFT()
			if !got.Unstreamed || got.TokenSource != backends.TokensUsage || got.OutputTokens < 1 || got.PromptTokens < 1 ||
				got.E2E() <= 0 || ttftOK || got.TextBytes == 0 || got.ResponseID == "" {
				t.Errorf("sample: %+v", got)
			}
		})
	}
}
