package anthropic

// Integration tests against real Messages API servers: the pinned Ollama's /v1/messages
// and the pinned vLLM CPU build's anthropic entrypoint (served by default beside its
// OpenAI routes), both on the tiny model. The adapter's token counts must equal the
// usage the server's own stream carries, read here with a scanner of the test's own.

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
	"github.com/planrun/planrun/backends/openai"
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

// rawUsage is what the server's own stream says, read without the adapter's decoder:
// message_start's usage, then message_delta's, which replaces what it repeats.
type rawUsage struct {
	Input, CacheRead, CacheCreate, Output int
	deltas, events                        int // content deltas with text, thinking or partial_json; all data events
	stopped                               bool
}

func rawMessages(t *testing.T, url string, body []byte) rawUsage {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("raw POST %s: %s", url, resp.Status)
	}
	type usage struct {
		Input       *int `json:"input_tokens"`
		CacheRead   *int `json:"cache_read_input_tokens"`
		CacheCreate *int `json:"cache_creation_input_tokens"`
		Output      *int `json:"output_tokens"`
	}
	var u rawUsage
	take := func(x *usage) {
		for _, f := range []struct {
			from *int
			to   *int
		}{{x.Input, &u.Input}, {x.CacheRead, &u.CacheRead}, {x.CacheCreate, &u.CacheCreate}, {x.Output, &u.Output}} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var ev struct {
			Type    string `json:"type"`
			Message struct {
				Usage usage `json:"usage"`
			} `json:"message"`
			Usage *usage `json:"usage"`
		}
		var d struct {
			Delta struct {
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil || json.Unmarshal([]byte(data), &d) != nil {
			t.Fatalf("raw event %q: %v", data, err)
		}
		u.events++
		switch ev.Type {
		case "message_start":
			take(&ev.Message.Usage)
		case "content_block_delta":
			if d.Delta.Text+d.Delta.Thinking+d.Delta.PartialJSON != "" {
				u.deltas++
			}
		case "message_delta":
			if ev.Usage != nil {
				take(ev.Usage)
			}
		case "message_stop":
			u.stopped = true
		}
	}
	if !u.stopped {
		t.Fatalf("raw %s: no message_stop", url)
	}
	return u
}

// checkAgainstRaw sends req through b and the same body raw, and holds the sample to
// the server's usage.
func checkAgainstRaw(t *testing.T, b *Backend, url string, req backends.Request) backends.Sample {
	t.Helper()
	got := b.Do(context.Background(), req)
	if !got.OK() {
		t.Fatalf("request failed: %v", got.Err)
	}
	body, err := b.Body(req)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawMessages(t, url+"/v1/messages", body)
	ttft, _ := got.TTFT()
	t.Logf("%s: output tokens %d (raw %d), prompt %d cached %d (raw input %d, cache read %d, created %d), %d deltas (raw %d), %d tool calls, TTFT %v, E2E %v, finish %q",
		req.ID, got.OutputTokens, raw.Output, got.PromptTokens, got.CachedTokens, raw.Input, raw.CacheRead, raw.CacheCreate,
		len(got.ChunkArrivals), raw.deltas, len(got.ToolCalls), ttft, got.E2E(), got.FinishReason)
	if got.TokenSource != backends.TokensUsage || got.OutputTokens != raw.Output || got.OutputTokens < 1 {
		t.Errorf("output tokens %d (%s), the server's usage.output_tokens %d", got.OutputTokens, got.TokenSource, raw.Output)
	}
	// The raw request follows ours with the same body, so its cache is at least as warm:
	// a cold request of ours (none cached) leaves its blocks for the raw one to find. Where
	// ours found some cached, both found the same full blocks.
	cachedOK := got.CachedTokens == raw.CacheRead || got.CachedTokens == 0
	if want := raw.Input + raw.CacheRead + raw.CacheCreate; got.PromptTokens != want || want <= 0 || !cachedOK {
		t.Errorf("prompt %d cached %d, the server's input %d + cache read %d + created %d", got.PromptTokens, got.CachedTokens, raw.Input, raw.CacheRead, raw.CacheCreate)
	}
	if ttft <= 0 || ttft > got.E2E() || got.FinishReason == "" {
		t.Errorf("TTFT %v, E2E %v, finish %q", ttft, got.E2E(), got.FinishReason)
	}
	return got
}

func TestRealOllamaMessages(t *testing.T) {
	s := ollamatest.Shared(t)
	temp := 0.0
	b := mustNew(t, backends.Config{Name: "anthropic.ollama", URL: s.URL + "/v1"})
	req := backends.Request{ID: "ollama/messages", Model: s.Model, Prompt: "hello world, the model", MaxTokens: 16, Temperature: &temp}
	got := checkAgainstRaw(t, b, s.URL, req)
	if got.Chunks < 1 || len(got.ChunkArrivals) != got.Chunks+got.ReasoningChunks+got.ToolChunks {
		t.Errorf("%d chunks, %d arrivals", got.Chunks, len(got.ChunkArrivals))
	}
	// The probe lists the model through the server's /v1/models and sends one Messages
	// request.
	p := b.Probe(context.Background(), []string{s.Model})
	if !p.OK() || p.UsageReported == nil || !*p.UsageReported {
		t.Errorf("probe: %+v", p)
	}
}

func TestRealVLLMMessages(t *testing.T) {
	s := vllmtest.Shared(t)
	temp := 0.0
	b := mustNew(t, backends.Config{Name: "anthropic.vllm", URL: s.URL + "/v1"})
	prompt := strings.Repeat("hello world, the model is a fast token server. ", 8)
	req := backends.Request{ID: "vllm/messages", Model: s.Model, Prompt: prompt, MaxTokens: 16, Temperature: &temp}
	checkAgainstRaw(t, b, s.URL, req)
	// Cached tokens need --enable-prompt-tokens-details (without it vLLM reports none):
	// TestRealVLLMAgentic checks them on a server that has it.
}

// TestRealVLLMAgentic: vLLM in dev mode with prompt token details. A repeated prompt's
// cached tokens are the server's (OpenAI's prompt_tokens_details and the Messages API's
// cache_read_input_tokens alike), /reset_prefix_cache empties the cache (the repeat after
// it has none cached), and tool_choice "required" forces a call from the random model
// whose name and JSON arguments the adapter reads, timed, on both protocols.
func TestRealVLLMAgentic(t *testing.T) {
	s := vllmtest.SharedAgentic(t)
	temp := 0.0
	ctx := context.Background()
	b := mustNew(t, backends.Config{Name: "anthropic.vllm", URL: s.URL + "/v1"})
	prompt := strings.Repeat("the agent reads this context again and again. ", 8)
	req := backends.Request{ID: "vllm/cache", Model: s.Model, Prompt: prompt, MaxTokens: 4, Temperature: &temp}
	checkAgainstRaw(t, b, s.URL, req)
	warm := checkAgainstRaw(t, b, s.URL, req)
	if err := b.ResetPrefixCache(ctx, s.Model); err != nil {
		t.Fatal(err)
	}
	cold := checkAgainstRaw(t, b, s.URL, req)
	t.Logf("cached tokens: warm %d, after the reset %d, of %d", warm.CachedTokens, cold.CachedTokens, warm.PromptTokens)
	if warm.CachedTokens <= 0 || cold.CachedTokens != 0 {
		t.Errorf("cached tokens warm %d, after the reset %d: want some, then none", warm.CachedTokens, cold.CachedTokens)
	}

	weather := backends.Tool{Name: "get_weather", Parameters: map[string]any{"type": "object", "required": []any{"city"},
		"properties": map[string]any{"city": map[string]any{"type": "string", "maxLength": 12}}}}
	call := backends.Request{ID: "vllm/tool", Model: s.Model, Prompt: "What is the weather in Oslo?", MaxTokens: 256,
		Temperature: &temp, Tools: []backends.Tool{weather}, ToolChoice: backends.ToolChoiceRequired}
	got := checkAgainstRaw(t, b, s.URL, call)
	first, done, ok := got.ToolCallTimes()
	t.Logf("messages tool call: %+v, first %v done %v", got.ToolCalls, first, done)
	// Guided decoding makes the call well-formed, not its arguments an object: the random
	// model's are `false` (vLLM 0.32's grammar allows it). The adapter must say exactly
	// that: its verdict is the arguments' own.
	if !got.ToolCalled() || got.ToolCalls[0].Name != "get_weather" || !ok || got.ToolCalls[0].ArgsJSON != jsonObject(got.ToolCalls[0].Args) || first <= 0 || done < first {
		t.Errorf("tool_choice required: calls %+v (times ok %v)", got.ToolCalls, ok)
	}
	oa, err := openai.New(backends.Config{Name: "openai.vllm", URL: s.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	got = oa.Do(ctx, call)
	first, done, ok = got.ToolCallTimes()
	t.Logf("openai tool call: %+v, first %v done %v, %d tokens, %d tool chunks, err %v", got.ToolCalls, first, done, got.OutputTokens, got.ToolChunks, got.Err)
	if !got.OK() || !got.ToolCalled() || got.ToolCalls[0].Name != "get_weather" || !ok || got.ToolCalls[0].ArgsJSON != jsonObject(got.ToolCalls[0].Args) || got.TokenSource != backends.TokensUsage {
		t.Errorf("openai tool_choice required: calls %+v (times ok %v), error %v", got.ToolCalls, ok, got.Err)
	}
}

// jsonObject reports whether s is a JSON object, as a tool's arguments must be.
func jsonObject(s string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}
