package openai

// Integration tests against a real vLLM (the pinned CPU build, scripts/install-vllm.sh)
// serving the tiny Hugging Face checkpoint: what the adapter reads must equal what vLLM
// itself says, read here with plain net/http from the raw stream and from /tokenize.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/testkit/gatewaytest"
	"github.com/planrun/planrun/internal/testkit/vllmtest"
)

func realVLLM(t *testing.T) *vllmtest.Server { return vllmtest.Shared(t) }

// vllmTokenize is vLLM's own prompt token count for body (prompt or messages), from its
// /tokenize endpoint.
func vllmTokenize(t *testing.T, s *vllmtest.Server, body map[string]any) int {
	t.Helper()
	body["model"] = s.Model
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL+"/tokenize", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Count       int `json:"count"`
		MaxModelLen int `json:"max_model_len"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/tokenize: status %s, %v", resp.Status, err)
	}
	return out.Count
}

// With engine_extensions the adapter sends ignore_eos / min_tokens: vLLM then generates
// exactly max_tokens, and the adapter's counts are vLLM's usage, to the token.
func TestRealVLLMExactCounts(t *testing.T) {
	s := realVLLM(t)
	const prompt = "hello world, the model is a fast token server"
	temp := 0.0
	seed := int64(42)
	for _, tt := range []struct {
		api, path string
		tokenize  map[string]any
	}{
		{"completions", "/completions", map[string]any{"prompt": prompt}},
		{"chat", "/chat/completions", map[string]any{"messages": []map[string]string{{"role": "user", "content": prompt}}, "add_generation_prompt": true}},
	} {
		t.Run(tt.api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "openai.vllm", URL: s.URL + "/v1", API: tt.api, EngineExtensions: true})
			req := backends.Request{ID: "vllm/" + tt.api, Model: s.Model, Prompt: prompt,
				MaxTokens: 24, ForceMaxTokens: true, Temperature: &temp, Seed: &seed}
			got := b.Do(context.Background(), req)
			if !got.OK() {
				t.Fatalf("request failed: %v", got.Err)
			}
			body, err := b.Body(req)
			if err != nil {
				t.Fatal(err)
			}
			raw := rawStream(t, s.URL+"/v1"+tt.path, body)
			want := vllmTokenize(t, s, tt.tokenize)
			ttft, _ := got.TTFT()
			t.Logf("%s: output %d (raw usage %d), prompt %d (raw usage %d, /tokenize %d), %d chunks, TTFT %v, E2E %v",
				tt.path, got.OutputTokens, raw.CompletionTokens, got.PromptTokens, raw.PromptTokens, want, got.Chunks, ttft, got.E2E())
			if got.TokenSource != backends.TokensUsage {
				t.Errorf("token source %q, want usage", got.TokenSource)
			}
			if got.OutputTokens != req.MaxTokens || raw.CompletionTokens != req.MaxTokens {
				t.Errorf("output tokens %d (vLLM's usage %d), want exactly max_tokens %d", got.OutputTokens, raw.CompletionTokens, req.MaxTokens)
			}
			if got.PromptTokens != raw.PromptTokens || got.PromptTokens != want {
				t.Errorf("prompt tokens %d, vLLM's usage %d, its /tokenize %d", got.PromptTokens, raw.PromptTokens, want)
			}
			if got.Chunks < 1 || got.Chunks > got.OutputTokens {
				t.Errorf("%d content chunks for %d tokens", got.Chunks, got.OutputTokens)
			}
		})
	}
}

// vLLM states its context in /v1/models as max_model_len: the adapter reads the
// --max-model-len the server was started with.
func TestRealVLLMContextLength(t *testing.T) {
	s := realVLLM(t)
	b := mustNew(t, backends.Config{Name: "openai.vllm", URL: s.URL + "/v1"})
	n, ok := b.ContextLength(context.Background(), s.Model)
	if !ok || n != vllmtest.MaxModelLen {
		t.Errorf("ContextLength = %d, %v; want %d from /v1/models", n, ok, vllmtest.MaxModelLen)
	}
}

// The probe finds the model, and usage on the stream.
func TestRealVLLMProbe(t *testing.T) {
	s := realVLLM(t)
	r := mustNew(t, backends.Config{Name: "openai.vllm", URL: s.URL + "/v1"}).Probe(context.Background(), []string{s.Model})
	t.Logf("probe: %+v", r)
	if !r.OK() || !r.ModelsPresent[s.Model] || r.UsageReported == nil || !*r.UsageReported {
		t.Errorf("probe of vLLM: ok %v, present %v, usage %v, problems %q", r.OK(), r.ModelsPresent, r.UsageReported, r.Problems)
	}
	// vLLM names the weights it loaded (/v1/models' root): the checkpoint directory.
	if r.ModelRoots[s.Model] != s.ModelDir {
		t.Errorf("probe's weights of %q: %q, want %q", s.Model, r.ModelRoots[s.Model], s.ModelDir)
	}
}

// stream = false on vLLM: one JSON body, with usage, exactly max_tokens long.
func TestRealVLLMNonStreamed(t *testing.T) {
	s := realVLLM(t)
	for _, api := range []string{"chat", "completions"} {
		t.Run(api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "openai.vllm", URL: s.URL + "/v1", API: api, EngineExtensions: true})
			got := b.Do(context.Background(), backends.Request{ID: "vllm/whole", Model: s.Model, Prompt: "hello world, the model",
				MaxTokens: 16, ForceMaxTokens: true, NoStream: true})
			if !got.OK() {
				t.Fatalf("request failed: %v", got.Err)
			}
			if !got.Unstreamed || got.TokenSource != backends.TokensUsage || got.OutputTokens != 16 || got.PromptTokens < 1 || got.ResponseID == "" {
				t.Errorf("sample: unstreamed %v, source %q, output %d (want 16), prompt %d, id %q",
					got.Unstreamed, got.TokenSource, got.OutputTokens, got.PromptTokens, got.ResponseID)
			}
		})
	}
}

// rawReasoning counts the reasoning and answer deltas of the stream vLLM sent (as a tap
// between the adapter and vLLM recorded it): chat chunks' delta.reasoning / content, or
// the Responses API's reasoning_text and output_text delta events, each when it carries
// text.
func rawReasoning(t *testing.T, sse []byte) (reasoning, answer int) {
	t.Helper()
	for _, data := range gatewaytest.DataEvents(sse) {
		var ev struct {
			Type    string          `json:"type"`
			Delta   json.RawMessage `json:"delta"`
			Choices []struct {
				Delta map[string]any `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		// A Responses delta event with an empty delta carries no text (vLLM sends some).
		var text string
		json.Unmarshal(ev.Delta, &text)
		switch {
		case text == "":
		case ev.Type == "response.reasoning_text.delta":
			reasoning++
		case ev.Type == "response.output_text.delta":
			answer++
		}
		for _, c := range ev.Choices {
			if s, _ := c.Delta["reasoning"].(string); s != "" {
				reasoning++
			}
			if s, _ := c.Delta["content"].(string); s != "" {
				answer++
			}
		}
	}
	return reasoning, answer
}

// TestRealVLLMReasoning: vLLM with --reasoning-parser deepseek_r1 streams the text before
// </think> as reasoning, over chat completions and the Responses API. The adapter counts
// the reasoning and answer deltas vLLM itself sent (recorded by a tap in between), TTFO
// follows TTFT, the output count is vLLM's usage (ignore_eos: exactly max_tokens), and
// as vLLM 0.32 reports reasoning_tokens = 0 even for a reasoning answer, reasoning
// chunks are counted and the sample says so.
func TestRealVLLMReasoning(t *testing.T) {
	s := vllmtest.SharedReasoning(t)
	tap := gatewaytest.NewTap(t, s.URL)
	seed := int64(3) // a seed whose answer closes its reasoning early (the model is random)
	for _, api := range []string{"chat", "responses"} {
		t.Run(api, func(t *testing.T) {
			b := mustNew(t, backends.Config{Name: "openai.vllm", URL: tap.URL + "/v1", API: api, EngineExtensions: true})
			got := b.Do(context.Background(), backends.Request{ID: "vllm/" + api, Model: s.Model, Prompt: "hello world",
				MaxTokens: 48, ForceMaxTokens: true, Seed: &seed})
			if !got.OK() {
				t.Fatal(got.Err)
			}
			ex := tap.Exchanges()
			wantR, wantA := rawReasoning(t, ex[len(ex)-1].Response)
			ttft, _ := got.TTFT()
			ttfo, ok := got.TTFO()
			if got.ReasoningChunks != wantR || got.Chunks != wantA || wantR == 0 || wantA == 0 || !ok || ttfo <= ttft {
				t.Errorf("reasoning %d / answer %d chunks, vLLM sent %d / %d; TTFT %v, TTFO %v (%v)",
					got.ReasoningChunks, got.Chunks, wantR, wantA, ttft, ttfo, ok)
			}
			if got.OutputTokens != 48 || got.TokenSource != backends.TokensUsage ||
				got.ReasoningTokenSource != backends.TokensChunks || got.ReasoningTokens != got.ReasoningChunks {
				t.Errorf("tokens %d (%s), reasoning tokens %d (%s)", got.OutputTokens, got.TokenSource, got.ReasoningTokens, got.ReasoningTokenSource)
			}
			t.Logf("%s: TTFT %v, TTFO %v, %d reasoning and %d answer chunks, %d tokens", api, ttft, ttfo, got.ReasoningChunks, got.Chunks, got.OutputTokens)
		})
	}
}

// TestRealVLLMEmbeddings: vLLM's pooling runner serves the tiny checkpoint as an
// embedding model (--runner pooling --convert embed). api = "embeddings" sends
// /v1/embeddings; the sample counts the embeddings returned, and its input tokens are
// vLLM's usage, equal to vLLM's own /tokenize count of each input.
func TestRealVLLMEmbeddings(t *testing.T) {
	s := vllmtest.SharedPooling(t)
	inputs := []string{"hello world, the model", "a fast token server", "plan run"}
	b := mustNew(t, backends.Config{Name: "openai.vllm", URL: s.URL + "/v1", API: backends.EmbeddingsAPI})
	got := b.Do(context.Background(), backends.Request{ID: "vllm/embed", Model: s.Model, Inputs: inputs, NoStream: true})
	if !got.OK() {
		t.Fatal(got.Err)
	}
	want := 0
	for _, in := range inputs {
		want += vllmTokenize(t, s, map[string]any{"prompt": in})
	}
	if _, ttft := got.TTFT(); got.Inputs != 3 || got.PromptTokens != want || got.TokenSource != backends.TokensUsage || ttft {
		t.Errorf("inputs %d, input tokens %d (%s), /tokenize says %d, TTFT %v", got.Inputs, got.PromptTokens, got.TokenSource, want, ttft)
	}
	t.Logf("%d inputs, %d input tokens (/tokenize: %d), latency %v", got.Inputs, got.PromptTokens, want, got.End)
}
