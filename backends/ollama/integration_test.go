package ollama

// Integration tests against a real Ollama (the pinned Ollama serving the tiny model):
// the adapter's figures must equal the server's own, read independently from the raw
// stream with net/http.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/testkit/ollamatest"
)

func TestMain(m *testing.M) { os.Exit(ollamatest.Main(m)) }

// realOllama is the test binary's real Ollama (the pinned Ollama with the tiny model).
func realOllama(t *testing.T) *ollamatest.Server { return ollamatest.Shared(t) }

const (
	realPrompt    = "hello world, the model"
	realMaxTokens = 16
	realSeed      = 42
)

// doneLine is what the server's own done line says, read without the adapter.
type doneLine struct {
	EvalCount       int `json:"eval_count"`
	PromptEvalCount int `json:"prompt_eval_count"`
	chunks          int
}

// rawNative sends the request the adapter sends (seeded, temperature 0: the same
// tokens) with plain net/http and returns the done line and the content line count.
func rawNative(t *testing.T, s *ollamatest.Server, api string) doneLine {
	t.Helper()
	body := map[string]any{
		"model":   s.Model,
		"stream":  true,
		"options": map[string]any{"num_predict": realMaxTokens, "seed": realSeed, "temperature": 0},
	}
	if api == "chat" {
		body["messages"] = []map[string]string{{"role": "user", "content": realPrompt}}
	} else {
		body["prompt"] = realPrompt
	}
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL+"/api/"+api, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var done doneLine
	sawDone := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var line struct {
			doneLine
			Response string `json:"response"`
			Message  struct {
				Content string `json:"content"`
			} `json:"message"`
			Done bool `json:"done"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if line.Response != "" || line.Message.Content != "" {
			done.chunks++
		}
		if line.Done {
			sawDone = true
			done.EvalCount, done.PromptEvalCount = line.EvalCount, line.PromptEvalCount
		}
	}
	if !sawDone {
		t.Fatalf("raw /api/%s: no done line", api)
	}
	return done
}

func TestRealOllamaNative(t *testing.T) {
	s := realOllama(t)
	temp := 0.0
	seed := int64(realSeed)
	for _, api := range []string{"chat", "generate"} {
		t.Run(api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL, API: api})
			got := b.Do(context.Background(), backends.Request{ID: "real/" + api, Model: s.Model, Prompt: realPrompt,
				MaxTokens: realMaxTokens, Temperature: &temp, Seed: &seed})
			if !got.OK() {
				t.Fatalf("request failed: %v", got.Err)
			}
			raw := rawNative(t, s, api)
			ttft, _ := got.TTFT()
			tpot, tpotOK := got.TPOT()
			t.Logf("/api/%s: output tokens %d (eval_count; raw request: %d), %d content chunks (raw: %d), prompt tokens %d, TTFT %v, TPOT %v, E2E %v, server: load %v prompt_eval %v eval %v",
				api, got.OutputTokens, raw.EvalCount, got.Chunks, raw.chunks, got.PromptTokens, ttft, tpot, got.E2E(),
				got.Server.LoadDuration, got.Server.PromptEvalDuration, got.Server.EvalDuration)

			if got.TokenSource != backends.TokensServer {
				t.Errorf("token source %q, want %q (eval_count), never chunks", got.TokenSource, backends.TokensServer)
			}
			if got.Server == nil {
				t.Fatal("no server timings captured from the done line")
			}
			if got.OutputTokens != got.Server.EvalCount || got.OutputTokens != raw.EvalCount {
				t.Errorf("output tokens %d, server eval_count %d, raw request's eval_count %d: must be equal",
					got.OutputTokens, got.Server.EvalCount, raw.EvalCount)
			}
			if got.OutputTokens < 2 || got.OutputTokens > realMaxTokens {
				t.Errorf("output tokens %d, want 2..%d (num_predict)", got.OutputTokens, realMaxTokens)
			}
			if got.Chunks < 1 || got.Chunks > got.OutputTokens || len(got.ChunkArrivals) != got.Chunks {
				t.Errorf("%d chunks (%d arrivals) for %d tokens: chunks are counted apart, at least one token each",
					got.Chunks, len(got.ChunkArrivals), got.OutputTokens)
			}
			if got.PromptTokens <= 0 || got.PromptTokens != got.Server.PromptEvalCount || got.PromptTokens != raw.PromptEvalCount {
				t.Errorf("prompt tokens %d, server %d, raw %d", got.PromptTokens, got.Server.PromptEvalCount, raw.PromptEvalCount)
			}
			if ttft <= 0 || ttft >= got.E2E() {
				t.Errorf("TTFT %v, E2E %v: want 0 < TTFT < E2E", ttft, got.E2E())
			}
			if !tpotOK || tpot <= 0 {
				t.Errorf("TPOT %v (defined %v) with %d tokens", tpot, tpotOK, got.OutputTokens)
			}
			if got.Server.LoadDuration <= 0 || got.Server.PromptEvalDuration <= 0 || got.Server.EvalDuration <= 0 || got.Server.TotalDuration <= 0 {
				t.Errorf("server timings not all captured: %+v", *got.Server)
			}
			if got.TextBytes == 0 || got.FinishReason == "" {
				t.Errorf("text bytes %d, finish reason %q", got.TextBytes, got.FinishReason)
			}
		})
	}
}

func TestRealOllamaUnknownModel(t *testing.T) {
	s := realOllama(t)
	for _, api := range []string{"chat", "generate"} {
		t.Run(api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL, API: api})
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
		})
	}
}

func TestRealOllamaProbe(t *testing.T) {
	s := realOllama(t)
	b := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL})
	r := b.Probe(context.Background(), []string{s.Model, "no-such-model"})
	t.Logf("probe: %+v", r)

	// The digest the server lists, read without the adapter.
	listed := s.Digest(t, s.Model+":latest")

	if !r.Reachable || r.Version != ollamatest.PinnedVersion {
		t.Errorf("reachable %v version %q, want the pinned %s", r.Reachable, r.Version, ollamatest.PinnedVersion)
	}
	if !r.ModelsPresent[s.Model] || r.ModelsPresent["no-such-model"] {
		t.Errorf("models present %v", r.ModelsPresent)
	}
	if d := r.ModelDigests[s.Model]; d == "" || d != listed {
		t.Errorf("digest of %s %q, server lists %q", s.Model, d, listed)
	}
	if _, ok := r.ModelDigests["no-such-model"]; ok {
		t.Errorf("a digest for a model the server lacks: %v", r.ModelDigests)
	}
	if r.UsageReported == nil || !*r.UsageReported {
		t.Errorf("usage reported %v: Ollama always sends eval_count", r.UsageReported)
	}
	if r.OK() || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "no-such-model") {
		t.Errorf("problems %q: want exactly the missing model", r.Problems)
	}
}

// stream = false on a real Ollama: the one done line carries the answer and the counts;
// E2E and tokens are measured, TTFT and TPOT are not.
func TestRealOllamaNonStreamed(t *testing.T) {
	s := realOllama(t)
	// Greedy and seeded, as TestRealOllamaNative: sampled freely, the tiny model's answer
	// was now and then tokens that decode to no text, which is no content chunk at all.
	temp := 0.0
	seed := int64(realSeed)
	for _, api := range []string{"chat", "generate"} {
		t.Run(api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL, API: api})
			got := b.Do(context.Background(), backends.Request{ID: "real/whole", Model: s.Model, Prompt: realPrompt,
				MaxTokens: realMaxTokens, NoStream: true, Temperature: &temp, Seed: &seed})
			if !got.OK() {
				t.Fatalf("request failed: %v", got.Err)
			}
			_, ttftOK := got.TTFT()
			_, tpotOK := got.TPOT()
			if !got.Unstreamed || got.TokenSource != backends.TokensServer || got.OutputTokens < 1 || got.PromptTokens < 1 ||
				got.E2E() <= 0 || ttftOK || tpotOK || got.Chunks != 1 {
				t.Errorf("sample: unstreamed %v, %s %d out, %d in, E2E %v, TTFT defined %v, TPOT defined %v, %d chunks",
					got.Unstreamed, got.TokenSource, got.OutputTokens, got.PromptTokens, got.E2E(), ttftOK, tpotOK, got.Chunks)
			}
		})
	}
}

// TestRealThinking: the pinned Ollama streams a thinking-capable model's reasoning in
// "thinking" (the tiny model's thinking variant, whose template Ollama reads the think
// tags from). The adapter counts it apart from the answer: TTFT is the first thinking
// chunk, TTFO the first answer chunk after it, and with no reasoning count from Ollama
// (eval_count covers both) reasoning chunks are counted and the sample says so. Without
// think, the same model answers without reasoning; think on a model without thinking
// support is the server's own 400, recorded as data.
func TestRealThinking(t *testing.T) {
	s := realOllama(t)
	name, err := s.CreateThinking()
	if err != nil {
		t.Fatal(err)
	}
	b := mustNew(t, backends.Config{URL: s.URL})
	seed := int64(2) // a seed whose answer closes its reasoning early (the model is random)
	req := backends.Request{ID: "think", Model: name, Prompt: "hello world", MaxTokens: 48, Seed: &seed, Think: new(true)}
	got := b.Do(context.Background(), req)
	if got.Err != nil {
		t.Fatal(got.Err)
	}
	ttft, _ := got.TTFT()
	ttfo, ok := got.TTFO()
	span, _ := got.ReasoningSpan()
	if got.ReasoningChunks == 0 || got.Chunks == 0 || !ok || ttfo <= ttft || span != ttfo-ttft {
		t.Fatalf("reasoning chunks %d, answer chunks %d, TTFT %v, TTFO %v (%v), span %v: want reasoning, then an answer",
			got.ReasoningChunks, got.Chunks, ttft, ttfo, ok, span)
	}
	if got.TokenSource != backends.TokensServer || got.OutputTokens != 48 ||
		got.ReasoningTokenSource != backends.TokensChunks || got.ReasoningTokens != got.ReasoningChunks ||
		got.AnswerTokens() != 48-got.ReasoningChunks {
		t.Errorf("tokens %d (%s), reasoning %d (%s), answer %d", got.OutputTokens, got.TokenSource,
			got.ReasoningTokens, got.ReasoningTokenSource, got.AnswerTokens())
	}
	t.Logf("TTFT %v, TTFO %v, reasoning chunks %d, answer chunks %d, eval_count %d", ttft, ttfo, got.ReasoningChunks, got.Chunks, got.OutputTokens)
	req.Think = new(false)
	if plain := b.Do(context.Background(), req); plain.Err != nil || plain.ReasoningChunks != 0 || plain.Chunks == 0 {
		t.Errorf("think = false: error %v, reasoning chunks %d, answer chunks %d", plain.Err, plain.ReasoningChunks, plain.Chunks)
	}
	req.Model, req.Think = s.Model, new(true)
	if no := b.Do(context.Background(), req); no.Err == nil || no.Err.Class != backends.ErrHTTP4xx || !strings.Contains(no.Err.Message, "thinking") {
		t.Errorf("think on a model without thinking: %+v", no.Err)
	}
}

// TestRealEmbeddings: api = "embeddings" sends /api/embed to the pinned Ollama; the
// sample's input tokens are the server's own prompt_eval_count for the same inputs, read
// here with plain net/http, and it counts the embeddings returned. Latency is the whole
// answer: no TTFT.
func TestRealEmbeddings(t *testing.T) {
	s := realOllama(t)
	b := mustNew(t, backends.Config{URL: s.URL, API: backends.EmbeddingsAPI})
	inputs := []string{"hello world, the model", "a fast token server", "plan run"}
	got := b.Do(context.Background(), backends.Request{ID: "embed", Model: s.Model, Inputs: inputs, NoStream: true})
	if got.Err != nil {
		t.Fatal(got.Err)
	}
	body, _ := json.Marshal(map[string]any{"model": s.Model, "input": inputs})
	resp, err := http.Post(s.URL+"/api/embed", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw struct {
		Embeddings      [][]float64 `json:"embeddings"`
		PromptEvalCount int         `json:"prompt_eval_count"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || raw.PromptEvalCount == 0 {
		t.Fatalf("/api/embed: %v, %+v", err, raw)
	}
	_, hasTTFT := got.TTFT()
	if got.PromptTokens != raw.PromptEvalCount || got.TokenSource != backends.TokensServer || got.Inputs != len(raw.Embeddings) ||
		got.Inputs != 3 || hasTTFT || got.End <= 0 {
		t.Errorf("input tokens %d (%s), the server's %d; inputs %d of %d; TTFT %v; latency %v",
			got.PromptTokens, got.TokenSource, raw.PromptEvalCount, got.Inputs, len(raw.Embeddings), hasTTFT, got.End)
	}
	t.Logf("%d inputs, %d input tokens (server: %d), latency %v", got.Inputs, got.PromptTokens, raw.PromptEvalCount, got.End)
}
