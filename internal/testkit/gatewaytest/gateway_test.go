package gatewaytest

// The taotoken backend (the strict profile) through a real LiteLLM proxy in front of the
// real Ollama: what the test sees at the engine is what a TaoToken user's request becomes.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/openai"
	"github.com/planrun/planrun/backends/taotoken"
	"github.com/planrun/planrun/internal/testkit/ollamatest"
)

func TestMain(m *testing.M) { os.Exit(ollamatest.Main(m)) }

const keyEnv = "PLANRUN_GATEWAY_TEST_KEY"

// key is the one key; a fixed value, so a leak is easy to grep for.
const key = "sk-gw-7f3a9c0d5e1b-only-from-env"

// strictFields are the OpenAI fields the strict profile may send; LiteLLM forwards to the
// engine what the client sent (plus nothing of its own for these requests).
var strictFields = []string{"model", "messages", "stream", "stream_options", "max_tokens", "temperature", "seed", "top_p"}

// twoRoutes starts a gateway with model names tiny-a and tiny-b, each routed to the real
// Ollama through its own tap, so a test sees which engine got which request.
func twoRoutes(t *testing.T, rpm map[string]int) (*Gateway, *Tap, *Tap) {
	s := ollamatest.Shared(t)
	a, b := NewTap(t, s.URL), NewTap(t, s.URL)
	t.Setenv(keyEnv, key)
	g := Start(t, Options{KeyEnv: keyEnv, ModelRPM: rpm, Routes: []Route{
		{Name: "tiny-a", APIBase: a.URL + "/v1", Model: s.Model},
		{Name: "tiny-b", APIBase: b.URL + "/v1", Model: s.Model},
	}})
	return g, a, b
}

func request(model string) backends.Request {
	temp, seed := 0.0, int64(42)
	return backends.Request{ID: "gw/" + model, Model: model, Prompt: "hello world, the model",
		MaxTokens: 8, ForceMaxTokens: true, Temperature: &temp, Seed: &seed}
}

func strictBackend(t *testing.T, url string, getenv func(string) string) *openai.Backend {
	b, err := taotoken.New(backends.Config{Name: "taotoken.gw", URL: url, APIKeyEnv: keyEnv, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// engineUsage is usage.completion_tokens as the engine itself streamed it to the gateway.
func engineUsage(t *testing.T, sse []byte) int { return engineOutputTokens(t, sse) }

// completions are the chat requests that reached an engine through its tap (LiteLLM also
// asks the engine for /v1/models now and then).
func completions(tap *Tap) []Exchange {
	var out []Exchange
	for _, e := range tap.Exchanges() {
		if e.Path == "/v1/chat/completions" {
			out = append(out, e)
		}
	}
	return out
}

// One gateway for the checks that need no rate limit (a start costs about 10 s).
func TestThroughGateway(t *testing.T) {
	g, tapA, tapB := twoRoutes(t, nil)
	t.Run("routes by name, strict fields, usage", func(t *testing.T) { routesByName(t, g, tapA, tapB) })
	t.Run("engine fields would show", func(t *testing.T) { engineFieldsWouldShow(t, g, tapA) })
	t.Run("key", func(t *testing.T) { keyOnlyFromEnvironment(t, g, tapA) })
	t.Run("responses API", func(t *testing.T) { responsesThroughGateway(t, g, tapA) })
	// Nothing the gateway logged carries the key.
	if b, err := os.ReadFile(g.LogPath); err != nil || bytes.Contains(b, []byte(key)) {
		t.Errorf("gateway log %s: read error %v, or it contains the key", g.LogPath, err)
	}
}

func routesByName(t *testing.T, g *Gateway, tapA, tapB *Tap) {
	b := strictBackend(t, g.URL, os.Getenv)
	for _, tt := range []struct {
		model     string
		to, other *Tap
	}{{"tiny-a", tapA, tapB}, {"tiny-b", tapB, tapA}} {
		beforeTo, beforeOther := len(completions(tt.to)), len(completions(tt.other))
		got := b.Do(context.Background(), request(tt.model))
		if !got.OK() {
			t.Fatalf("%s through the gateway: %v\ngateway log: %s", tt.model, got.Err, g.LogPath)
		}
		ex, other := completions(tt.to), completions(tt.other)
		if len(ex) != beforeTo+1 || len(other) != beforeOther {
			t.Fatalf("%s: %d new requests at its engine, %d at the other: want 1 and 0", tt.model, len(ex)-beforeTo, len(other)-beforeOther)
		}
		e := ex[len(ex)-1]
		var body map[string]any
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatalf("body at the engine: %v: %s", err, e.Body)
		}
		t.Logf("%s reached the engine at %s as %s", tt.model, e.Path, e.Body)
		if body["model"] != "tiny" {
			t.Errorf("%s reached the engine for model %v, want the engine's name tiny", tt.model, body["model"])
		}
		for k := range body {
			if !slices.Contains(strictFields, k) {
				t.Errorf("%s: field %q reached the engine; the strict profile sends only %v", tt.model, k, strictFields)
			}
		}
		if strings.Contains(e.Header.Get("Authorization"), key) {
			t.Errorf("%s: the gateway passed the client's key on to the engine", tt.model)
		}
		// Usage passes through: the row's count is the engine's own.
		if want := engineUsage(t, e.Response); got.TokenSource != backends.TokensUsage || got.OutputTokens != want {
			t.Errorf("%s: %d output tokens from %q, the engine's usage.completion_tokens %d", tt.model, got.OutputTokens, got.TokenSource, want)
		}
	}
}

// The same check sees an engine-only field when a client sends one: the strict-fields
// assertion above can fail.
func engineFieldsWouldShow(t *testing.T, g *Gateway, tapA *Tap) {
	before := len(completions(tapA))
	b, err := openai.New(backends.Config{Name: "openai.gw", URL: g.URL, APIKeyEnv: keyEnv, EngineExtensions: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Do(context.Background(), request("tiny-a")); !got.OK() {
		t.Fatalf("through the gateway: %v", got.Err)
	}
	ex := completions(tapA)
	if len(ex) != before+1 {
		t.Fatalf("%d requests reached the engine, want 1", len(ex)-before)
	}
	if !bytes.Contains(ex[before].Body, []byte(`"ignore_eos"`)) {
		t.Errorf("an engine extension sent to the gateway did not reach the engine: %s", ex[before].Body)
	}
}

// The key comes only from the environment: unset, nothing is sent; wrong, the gateway
// answers 401 and the message names the variable, never the value.
func keyOnlyFromEnvironment(t *testing.T, g *Gateway, tap *Tap) {
	before := len(completions(tap))
	got := strictBackend(t, g.URL, func(string) string { return "" }).Do(context.Background(), request("tiny-a"))
	if got.Err == nil || got.Err.Class != backends.ErrMissingKey || !strings.Contains(got.Err.Message, keyEnv) {
		t.Errorf("key unset: %v, want class %q naming %s", got.Err, backends.ErrMissingKey, keyEnv)
	}
	const wrong = "sk-gw-wrong-0000000000"
	got = strictBackend(t, g.URL, func(string) string { return wrong }).Do(context.Background(), request("tiny-a"))
	t.Logf("wrong key: %v", got.Err)
	if got.Err == nil || got.Err.Class != backends.ErrUnauthorized || got.Err.Status != 401 ||
		!strings.Contains(got.Err.Message, "$"+keyEnv) || strings.Contains(got.Err.Message, wrong) {
		t.Errorf("wrong key: %v, want a 401 naming $%s without the key", got.Err, keyEnv)
	}
	if n := len(completions(tap)) - before; n != 0 {
		t.Errorf("%d requests without the right key reached the engine", n)
	}
}

func TestBinaryNotFound(t *testing.T) {
	t.Setenv(BinaryEnv, "/nonexistent/litellm")
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), BinaryEnv) {
		t.Errorf("Binary() with %s pointing nowhere: %v, want an error naming the variable", BinaryEnv, err)
	}
	if _, err := binaryIn(t.TempDir()); err == nil || !strings.Contains(err.Error(), InstallCommand) {
		t.Errorf("no install under the root: %v, want the install command", err)
	}
}

// responsesThroughGateway: api = "responses" on a strict OpenAI backend streams the
// Responses API through the gateway; its output tokens are the engine's own count, read
// from what the engine streamed back (the gateway may ask the engine's Responses or
// chat endpoint), and nothing engine-specific was sent.
func responsesThroughGateway(t *testing.T, g *Gateway, tap *Tap) {
	b, err := openai.NewStrict(backends.Config{Name: "openai.gw", URL: g.URL, API: "responses", APIKeyEnv: keyEnv})
	if err != nil {
		t.Fatal(err)
	}
	before := len(tap.Exchanges())
	req := request("tiny-a")
	req.ForceMaxTokens = false
	got := b.Do(context.Background(), req)
	if !got.OK() {
		t.Fatalf("responses through the gateway: %v\ngateway log: %s", got.Err, g.LogPath)
	}
	var engine *Exchange
	for _, e := range tap.Exchanges()[before:] {
		if e.Path == "/v1/responses" || e.Path == "/v1/chat/completions" {
			engine = &e
		}
	}
	if engine == nil {
		t.Fatalf("no generation request reached the engine: %v", tap.Exchanges()[before:])
	}
	want := engineOutputTokens(t, engine.Response)
	if ttft, ok := got.TTFT(); !ok || got.Chunks == 0 || got.TokenSource != backends.TokensUsage || got.OutputTokens != want || ttft > got.E2E() {
		t.Errorf("chunks %d, tokens %d (%s), engine's %d, TTFT %v (%v): want the engine's count through the Responses API",
			got.Chunks, got.OutputTokens, got.TokenSource, want, ttft, ok)
	}
	t.Logf("engine path %s: %d output tokens in %d chunks, TTFT %v", engine.Path, got.OutputTokens, got.Chunks, got.FirstToken)
}

// engineOutputTokens is the engine's own output count in its stream: usage.completion_tokens
// of a chat stream, or usage.output_tokens of a Responses stream's response.completed.
func engineOutputTokens(t *testing.T, sse []byte) int {
	t.Helper()
	n := -1
	for _, data := range DataEvents(sse) {
		var ev struct {
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Response *struct {
				Usage *struct {
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			} `json:"response"`
		}
		if json.Unmarshal([]byte(data), &ev) != nil {
			continue
		}
		if ev.Usage != nil {
			n = ev.Usage.CompletionTokens
		}
		if ev.Response != nil && ev.Response.Usage != nil {
			n = ev.Response.Usage.OutputTokens
		}
	}
	if n < 0 {
		t.Fatalf("the engine's stream carried no usage:\n%s", sse)
	}
	return n
}
