package taotoken

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
)

const key = "tt-0123456789abcdef-secret"

func getenv(k string) string {
	if k == DefaultKeyEnv {
		return key
	}
	return ""
}

// gateway is a fake TaoToken: it checks the Bearer key and the strictness of the body,
// lists models, and streams a recorded answer.
func gateway(t *testing.T) *httptest.Server {
	stream, err := os.ReadFile("testdata/gateway_chat.sse")
	if err != nil {
		t.Fatal(err)
	}
	replay := &backendtest.Stream{ContentType: "text/event-stream", Parts: backendtest.Split(stream, "\n\n")}
	mux := http.NewServeMux()
	auth := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"Invalid API key %s","code":401}}`, r.Header.Get("Authorization"))
			return false
		}
		return true
	}
	mux.HandleFunc("/api/v1/models", func(w http.ResponseWriter, r *http.Request) {
		if auth(w, r) {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"deepseek-v3"},{"id":"qwen-max"}]}`)
		}
	})
	mux.HandleFunc("/api/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if !auth(w, r) {
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		for k := range body {
			switch k {
			case "model", "messages", "stream", "stream_options", "max_tokens", "temperature", "seed", "top_p":
			default:
				w.WriteHeader(400)
				fmt.Fprintf(w, `{"error":{"message":"Unrecognized request argument supplied: %s","type":"invalid_request_error"}}`, k)
				return
			}
		}
		if body["model"] != "deepseek-v3" && body["model"] != "qwen-max" {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"%v is not a valid model ID","code":400}}`, body["model"])
			return
		}
		replay.ServeHTTP(w, r)
	})
	return httptest.NewServer(mux)
}

func TestGateway(t *testing.T) {
	srv := gateway(t)
	defer srv.Close()
	cfg := backends.Config{Name: "taotoken.gw", URL: srv.URL + "/api/v1", Getenv: getenv}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b.Kind() != "taotoken" {
		t.Errorf("kind %q", b.Kind())
	}
	s := b.Do(context.Background(), backends.Request{Model: "deepseek-v3", Prompt: "hi", MaxTokens: 8, ForceMaxTokens: true})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if s.Chunks != 2 || s.OutputTokens != 3 || s.TokenSource != backends.TokensUsage || s.PromptTokens != 9 || s.TextBytes != 15 {
		t.Errorf("sample %+v", s)
	}

	// An unknown model: the gateway's own message and its model list.
	s = b.Do(context.Background(), backends.Request{Model: "gpt-9", Prompt: "hi"})
	if s.Err == nil || s.Err.Class != backends.ErrHTTP4xx || !strings.Contains(s.Err.Message, "not a valid model ID") ||
		!strings.Contains(s.Err.Message, "deepseek-v3, qwen-max") {
		t.Errorf("unknown model: %v", s.Err)
	}

	r := b.Probe(context.Background(), []string{"deepseek-v3", "gpt-9"})
	if !r.Reachable || !r.ModelsPresent["deepseek-v3"] || r.ModelsPresent["gpt-9"] || r.UsageReported == nil || !*r.UsageReported || r.Version != "" {
		t.Errorf("probe %+v", r)
	}
}

func TestGatewayKey(t *testing.T) {
	srv := gateway(t)
	defer srv.Close()
	// Unset: named, nothing sent.
	b, _ := New(backends.Config{Name: "taotoken.gw", URL: srv.URL + "/api/v1", Getenv: func(string) string { return "" }})
	s := b.Do(context.Background(), backends.Request{Model: "deepseek-v3"})
	if s.Err == nil || s.Err.Class != backends.ErrMissingKey || !strings.Contains(s.Err.Message, "TAOTOKEN_API_KEY") {
		t.Errorf("missing key: %v", s.Err)
	}
	// Wrong key, echoed back by the gateway: the message must not repeat it.
	wrong := "tt-wrong-key-0000000000"
	b, _ = New(backends.Config{Name: "taotoken.gw", URL: srv.URL + "/api/v1", APIKeyEnv: "MY_TT",
		Getenv: func(k string) string { return map[string]string{"MY_TT": wrong}[k] }})
	s = b.Do(context.Background(), backends.Request{Model: "deepseek-v3"})
	if s.Err == nil || s.Err.Class != backends.ErrUnauthorized || !strings.Contains(s.Err.Message, "$MY_TT") ||
		!strings.Contains(s.Err.Message, "Invalid API key") || strings.Contains(s.Err.Message, wrong) {
		t.Errorf("401: %v", s.Err)
	}
	p := b.Probe(context.Background(), nil)
	if !p.Reachable || p.OK() || strings.Contains(strings.Join(p.Problems, " "), wrong) {
		t.Errorf("probe with a wrong key %+v", p)
	}
}

func TestDefaultsAndStrictness(t *testing.T) {
	b, err := New(backends.Config{Name: "taotoken.gw", Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.NewRequest(context.Background(), backends.Request{Model: "m", MaxTokens: 4, ForceMaxTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL.String() != DefaultURL+"/chat/completions" || r.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("request to %s with auth %q", r.URL, r.Header.Get("Authorization"))
	}
	body, _ := b.Body(backends.Request{Model: "m", MaxTokens: 4, ForceMaxTokens: true})
	if strings.Contains(string(body), "ignore_eos") || strings.Contains(string(body), "min_tokens") {
		t.Errorf("strict body carries engine extensions: %s", body)
	}
	if _, err := New(backends.Config{EngineExtensions: true}); err == nil {
		t.Error("engine extensions accepted")
	}
	if _, err := New(backends.Config{ExtraFields: map[string]any{"repetition_penalty": 1.1}}); err == nil {
		t.Error("non-standard field accepted")
	}
}
