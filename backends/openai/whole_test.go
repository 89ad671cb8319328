package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/planrun/planrun/backends"
)

// vLLM's answer to "stream": false, as it writes it.
const wholeChat = `{"id":"chatcmpl-77","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"one two three","reasoning_content":null},"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":{"prompt_tokens":9,"total_tokens":14,"completion_tokens":5}}`

// A non-streamed request asks for no stream, and its sample has E2E and the server's
// counts, but no TTFT, TPOT or ITL: the one arrival is the whole answer.
func TestNonStreamed(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(wholeChat))
	}))
	defer srv.Close()
	s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(context.Background(),
		backends.Request{ID: "r", Model: "m", Prompt: "hi", MaxTokens: 5, NoStream: true})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if body["stream"] != false || body["stream_options"] != nil {
		t.Errorf("request body %v: want stream false and no stream_options", body)
	}
	if !s.Unstreamed || s.OutputTokens != 5 || s.PromptTokens != 9 || s.TokenSource != backends.TokensUsage ||
		s.FinishReason != "length" || s.ResponseID != "chatcmpl-77" || s.TextBytes != len("one two three") {
		t.Errorf("sample = %+v", s)
	}
	if _, ok := s.TTFT(); ok {
		t.Error("a non-streamed request has a TTFT")
	}
	if _, ok := s.TPOT(); ok {
		t.Error("a non-streamed request has a TPOT")
	}
	if s.E2E() <= 0 || len(s.ITL()) != 0 {
		t.Errorf("E2E %v, ITL %v: want an E2E and no gaps", s.E2E(), s.ITL())
	}
}

func TestNonStreamedMalformed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id": "x", "choices": [`))
	}))
	defer srv.Close()
	s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(context.Background(), backends.Request{ID: "r", Model: "m", Prompt: "hi", NoStream: true})
	if s.Err == nil || s.Err.Class != backends.ErrMalformed {
		t.Fatalf("err = %v, want malformed", s.Err)
	}
}

// A non-streamed answer's reasoning is counted apart from its text, in either of the
// fields servers put it in (vLLM's reasoning_content, the newer reasoning).
func TestNonStreamedReasoning(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		answer := `{"id":"c","choices":[{"message":{"role":"assistant","content":"four","` + field +
			`":"let me think"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":6}}`
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(answer))
		}))
		s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(context.Background(),
			backends.Request{ID: "r", Model: "m", Prompt: "2+2?", NoStream: true})
		srv.Close()
		if s.Err != nil || s.TextBytes != len("four") || s.ReasoningBytes != len("let me think") {
			t.Errorf("%s: text %d bytes, reasoning %d bytes (error %v); want 4 and 12", field, s.TextBytes, s.ReasoningBytes, s.Err)
		}
	}
}

// A non-streamed answer's text is kept too, when asked.
func TestNonStreamedKeepText(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(wholeChat))
	}))
	defer srv.Close()
	s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(context.Background(),
		backends.Request{ID: "r", Model: "m", Prompt: "hi", NoStream: true, KeepText: true})
	if s.Err != nil || s.Text != "one two three" {
		t.Errorf("text %q (error %v), want %q", s.Text, s.Err, "one two three")
	}
}
