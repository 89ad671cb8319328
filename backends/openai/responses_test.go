package openai

import (
	"context"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
	"github.com/planrun/planrun/servers/mockserver"
)

// TestResponsesStream replays a Responses API stream: reasoning deltas, then answer
// deltas (their text kept), the usage of response.completed with its reasoning count,
// and the response id of response.created. Events that carry no delta are not tokens.
func TestResponsesStream(t *testing.T) {
	srv := httptest.NewServer(&backendtest.Stream{ContentType: "text/event-stream",
		Parts: backendtest.Split(backendtest.ReadStream(t, "responses_reasoning.sse"), "\n\n")})
	defer srv.Close()
	b := mustNew(t, backends.Config{URL: srv.URL + "/v1", API: "responses"})
	s := b.Do(context.Background(), backends.Request{ID: "r1", Model: "m", Prompt: "hi", MaxTokens: 9, KeepText: true})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	got := []any{s.Chunks, s.ReasoningChunks, s.OutputTokens, s.ReasoningTokens, s.ReasoningTokenSource, s.AnswerTokens(),
		s.PromptTokens, s.TextBytes, s.ReasoningBytes, s.TokenSource, s.FinishReason, s.Text, s.ResponseID}
	want := []any{2, 2, 9, 4, backends.TokensUsage, 5, 7, 11, 10, backends.TokensUsage, "stop", `Hello "you"`, "resp_abc"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chunks, reasoning chunks, tokens, reasoning tokens, source, answer, prompt, text bytes, reasoning bytes, source, finish, text, id =\n %v, want\n %v", got, want)
	}
	if ttfo, ok := s.TTFO(); !ok || ttfo < s.FirstToken || s.FirstAnswer != s.ChunkArrivals[2] {
		t.Errorf("TTFO %v, first token %v, arrivals %v", ttfo, s.FirstToken, s.ChunkArrivals)
	}
}

// TestResponsesFailures: an error event and response.failed are server errors with the
// server's message, recorded on the sample.
func TestResponsesFailures(t *testing.T) {
	for _, ev := range []string{
		`data: {"type":"error","code":"server_error","message":"engine died"}`,
		`data: {"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"engine died"}}}`,
	} {
		srv := httptest.NewServer(&backendtest.Stream{ContentType: "text/event-stream", Parts: [][]byte{
			[]byte(`data: {"type":"response.output_text.delta","delta":"a"}` + "\n\n"), []byte(ev + "\n\n")}})
		s := mustNew(t, backends.Config{URL: srv.URL + "/v1", API: "responses"}).Do(context.Background(),
			backends.Request{ID: "r", Model: "m", Prompt: "hi"})
		srv.Close()
		if s.Err == nil || s.Err.Class != backends.ErrServer || s.Chunks != 1 ||
			s.Err.Message != "the server reported an error mid-stream: engine died" {
			t.Errorf("%s: chunks %d, error %+v", ev, s.Chunks, s.Err)
		}
	}
}

// TestResponsesNoStream: a non-streamed Responses API answer (the mock's, with
// reasoning) is one arrival with the usage's counts; its text is the message's
// output_text, its reasoning counted apart, and there is no TTFT or TTFO.
func TestResponsesNoStream(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, ReasoningTokens: 3, ReasoningUsage: true}))
	defer srv.Close()
	b := mustNew(t, backends.Config{URL: srv.URL + "/v1", API: "responses"})
	s := b.Do(context.Background(), backends.Request{ID: "r", Model: "m", Prompt: "one two", MaxTokens: 8, NoStream: true, KeepText: true})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	_, ttft := s.TTFT()
	_, ttfo := s.TTFO()
	got := []any{s.OutputTokens, s.ReasoningTokens, s.AnswerTokens(), s.PromptTokens, s.FinishReason, s.Text, ttft, ttfo, s.ReasoningBytes > 0}
	want := []any{8, 3, 5, 2, "length", " fox jumps over a lazy", false, false, true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens, reasoning, answer, prompt, finish, text, ttft ok, ttfo ok, reasoning bytes > 0 =\n %v, want\n %v", got, want)
	}
}
