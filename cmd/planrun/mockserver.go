package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/planrun/planrun/servers/mockserver"
)

func init() {
	register("mock-server", "serve a scripted OpenAI/Ollama streaming server with known timing", runMockServer)
}

// mockServerArgs are mock-server's flags.
type mockServerArgs struct {
	Addr string
	Cfg  mockserver.Config
	// apiKeyEnv names the variable holding the key, so it need not sit in shell history.
	apiKeyEnv string
}

func parseMockServer(args []string, stderr io.Writer) (*mockServerArgs, error) {
	a := &mockServerArgs{}
	c := &a.Cfg
	fs := newUsageFlagSet(stderr, "mock-server", `Usage: planrun mock-server [flags]

Serves, until Ctrl-C:
  OpenAI-style (vLLM): `+strings.Join(mockserver.Endpoints("/v1"), ", ")+`, /metrics
  Ollama-style:        `+strings.Join(mockserver.Endpoints("/api"), ", ")+`
Send 'X-Mock-Fault: <fault>' on a request to force one fault.

`)
	var models string
	fs.StringVar(&a.Addr, "addr", "127.0.0.1:8000", "listen address")
	fs.DurationVar(&c.TTFT, "ttft", 200*time.Millisecond, "time from admission to the first content chunk")
	fs.DurationVar(&c.TPOT, "tpot", 20*time.Millisecond, "time between tokens")
	fs.DurationVar(&c.Jitter, "jitter", 0, "uniform ± jitter on TTFT and every token gap (seeded)")
	fs.IntVar(&c.TokensPerChunk, "tokens-per-chunk", 1, "tokens coalesced per chunk after the first")
	fs.IntVar(&c.OutputTokens, "output-tokens", 128, "output length when the request sets no max_tokens/num_predict")
	fs.IntVar(&c.EOSAt, "eos-at", 0, "stop by itself after N tokens (finish_reason stop); 0: never")
	fs.IntVar(&c.ReasoningTokens, "reasoning-tokens", 0, "the first N tokens of every chat answer are reasoning (reasoning_content, Ollama thinking)")
	fs.StringVar(&c.ReasoningField, "reasoning-field", "reasoning_content", "OpenAI delta field of reasoning: reasoning_content or reasoning")
	fs.BoolVar(&c.ReasoningUsage, "reasoning-usage", false, "report usage.completion_tokens_details.reasoning_tokens")
	fs.BoolVar(&c.PrefixCache, "prefix-cache", false, "keep a prefix cache of the prompts received: cached words cost no prefill, the usage says how many (POST /reset_prefix_cache empties it)")
	fs.DurationVar(&c.PrefillPerToken, "prefill-per-token", 0, "prefill time per prompt word the prefix cache does not hold, added to TTFT")
	fs.IntVar(&c.ToolCalls, "tool-calls", 0, "script an agent loop: chat requests offering tools call one until their conversation carries this many tool results since its last user prompt, then answer in text")
	fs.Float64Var(&c.ToolCallRate, "tool-call-rate", 0, "share of chat requests offering tools (tool_choice auto) answered with a call of the first tool; required or a named tool always call")
	fs.IntVar(&c.QueueSlots, "queue-slots", 0, "at most N requests decode at once, others wait; 0: unbounded")
	fs.StringVar(&models, "models", "", "comma-separated model names served; empty accepts any")
	fs.StringVar(&c.APIKey, "api-key", "", "require 'Authorization: Bearer <key>' on /v1/* (prefer -api-key-env)")
	apiKeyEnv := fs.String("api-key-env", "", "read the required API key from this environment variable")
	fs.StringVar(&c.Version, "server-version", "", "version /version and /api/version report (default mock-<planrun version>)")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed for jitter and fault choice")
	holdMB := fs.Int64("hold-mb", 0, "keep this many MiB resident from the start, standing for a model's weights (a known part of memory figures)")
	f := &c.Faults
	fs.Float64Var(&f.Forbidden, "fault-403", 0, "rate of 403 responses")
	fs.Float64Var(&f.NotFound, "fault-404", 0, "rate of 404 responses")
	fs.Float64Var(&f.RateLimited, "fault-429", 0, "rate of 429 responses (with Retry-After)")
	fs.Float64Var(&f.Internal, "fault-500", 0, "rate of 500 responses")
	fs.Float64Var(&f.Unavailable, "fault-503", 0, "rate of 503 responses (with Retry-After)")
	fs.Float64Var(&f.StreamCut, "fault-cut", 0, "rate of streams cut mid-way")
	fs.Float64Var(&f.Malformed, "fault-malformed", 0, "rate of streams with a malformed chunk")
	fs.Float64Var(&f.Stall, "fault-stall", 0, "rate of streams that stall")
	fs.IntVar(&f.AfterChunks, "fault-after", 2, "content chunks written before a mid-stream fault")
	fs.DurationVar(&f.StallFor, "stall-for", 10*time.Second, "length of a stall")
	fs.StringVar(&f.RetryAfter, "retry-after", "1", "Retry-After header on 429 and 503")
	operands, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(operands) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", operands[0])
	}
	c.Models = splitList(models)
	c.HoldBytes = *holdMB << 20
	a.apiKeyEnv = *apiKeyEnv
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

func runMockServer(ctx context.Context, env *Env, args []string) int {
	a, err := parseMockServer(args, env.Stderr)
	if err != nil {
		return usageExit(env, "mock-server", err)
	}
	if a.apiKeyEnv != "" {
		a.Cfg.APIKey = env.Getenv(a.apiKeyEnv)
		if a.Cfg.APIKey == "" {
			fmt.Fprintf(env.Stderr, "planrun mock-server: %s is not set\n", a.apiKeyEnv)
			return exitUsage
		}
	}
	srv := mockserver.New(a.Cfg)
	url, stop, err := srv.Start(a.Addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun mock-server: %v\n", err)
		return exitError
	}
	defer stop()
	fmt.Fprintf(env.Stdout, "mock-server listening on %s (OpenAI: %s/v1, Ollama: %s)\n", url, url, url)
	fmt.Fprintf(env.Stdout, "ttft=%s tpot=%s jitter=%s tokens-per-chunk=%d queue-slots=%d seed=%d\n",
		a.Cfg.TTFT, a.Cfg.TPOT, a.Cfg.Jitter, max(a.Cfg.TokensPerChunk, 1), a.Cfg.QueueSlots, a.Cfg.Seed)
	select {
	case <-ctx.Done():
	case <-env.Interrupts: // nil in tests: never fires
	}
	st := srv.Stats()
	fmt.Fprintf(env.Stdout, "mock-server stopped: %d requests, %d output tokens\n", st.Requests, st.OutputTokens)
	return exitOK
}
