package openai

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// serve answers every request with body, and keeps the last request's path.
func serve(t *testing.T, contentType, body string) (*httptest.Server, *string) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &path
}

// The completions API's streamed logprobs (tokens by id, as vLLM names them with
// return_tokens_as_token_ids) and chat's reach the Sample in order; vLLM's
// "logprobs": null on every chat chunk is none.
func TestStreamedLogProbs(t *testing.T) {
	completions := `data: {"id":"cmpl-1","choices":[{"index":0,"text":" the","logprobs":{"text_offset":[5],"token_logprobs":[-0.5],"tokens":["token_id:450"],"top_logprobs":[{"token_id:450":-0.5,"token_id:263":-1.25}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"cmpl-1","choices":[{"index":0,"text":" cat","logprobs":{"text_offset":[9],"token_logprobs":[-2],"tokens":["token_id:6635"],"top_logprobs":[{"token_id:11203":-0.25,"token_id:6635":-2}]},"finish_reason":"length"}]}` + "\n\n" +
		`data: {"id":"cmpl-1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" +
		"data: [DONE]\n\n"
	chat := `data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c","choices":[{"index":0,"delta":{"content":" the"},"logprobs":{"content":[{"token":" the","logprob":-0.5,"bytes":[32,116,104,101],"top_logprobs":[{"token":" the","logprob":-0.5},{"token":" a","logprob":-1.25}]}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c","choices":[{"index":0,"delta":{"content":" cat"},"logprobs":{"content":[{"token":" cat","logprob":-2,"top_logprobs":[{"token":" dog","logprob":-0.25},{"token":" cat","logprob":-2}]}]},"finish_reason":"length"}]}` + "\n\n" +
		`data: {"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" +
		"data: [DONE]\n\n"
	for _, tc := range []struct {
		name, body, path string
		req              backends.Request
		id               int // the second token's id, -1 where named by text
		top              string
	}{
		{"completions by id", completions, "/v1/completions", backends.Request{Model: "m", Prompt: "p", Raw: true, TopLogProbs: 2, TokenIDs: true}, 6635, "token_id:11203"},
		{"chat", chat, "/v1/chat/completions", backends.Request{Model: "m", Prompt: "p", TopLogProbs: 2}, -1, " dog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, path := serve(t, "text/event-stream", tc.body)
			s := mustNew(t, backends.Config{URL: srv.URL + "/v1", EngineExtensions: true}).Do(context.Background(), tc.req)
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			if *path != tc.path || len(s.LogProbs) != 2 || s.OutputTokens != 2 {
				t.Fatalf("%s: %d positions, %d tokens", *path, len(s.LogProbs), s.OutputTokens)
			}
			p := s.LogProbs[1]
			if p.ID != tc.id || p.LogProb.LogProb != -2 || len(p.Top) != 2 || p.Top[0].Token != tc.top || p.Top[0].LogProb != -0.25 {
				t.Errorf("second position %+v", p)
			}
		})
	}
}

// vLLM's prompt_logprobs (unstreamed only): one position per prompt token, the first
// null, each position's tokens ranked with the prompt's own among them.
func TestPromptLogProbs(t *testing.T) {
	body := `{"id":"cmpl-2","object":"text_completion","choices":[{"index":0,"text":" x","logprobs":{"text_offset":[0],"token_logprobs":[-0.1],"tokens":["token_id:87"],"top_logprobs":[{"token_id:87":-0.1}]},"finish_reason":"length",` +
		`"prompt_logprobs":[null,{"450":{"logprob":-3.5,"rank":7,"decoded_token":" the"},"263":{"logprob":-0.5,"rank":1,"decoded_token":" a"}},{"6635":{"logprob":-0.25,"rank":1,"decoded_token":" cat"}}]}],` +
		`"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	srv, path := serve(t, "application/json", body)
	s := mustNew(t, backends.Config{URL: srv.URL + "/v1", EngineExtensions: true}).Do(context.Background(),
		backends.Request{Model: "m", PromptIDs: []int{1, 450, 6635}, MaxTokens: 1, NoStream: true, TopLogProbs: 1, PromptLogProbs: 1, TokenIDs: true})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if *path != "/v1/completions" || len(s.PromptLogProbs) != 3 || len(s.LogProbs) != 1 || s.LogProbs[0].ID != 87 {
		t.Fatalf("%s: prompt %+v, generated %+v", *path, s.PromptLogProbs, s.LogProbs)
	}
	if len(s.PromptLogProbs[0].Top) != 0 {
		t.Errorf("the first prompt token has log-probabilities: %+v", s.PromptLogProbs[0])
	}
	second := s.PromptLogProbs[1].Top
	if len(second) != 2 || second[0].ID != 263 || second[0].Rank != 1 || second[1].ID != 450 || second[1].LogProb != -3.5 || second[1].Token != " the" {
		t.Errorf("second position %+v", second)
	}
	for _, bad := range []string{
		`{"choices":[{"text":"x","prompt_logprobs":[null,{"x1":{"logprob":-1,"rank":1}}]}]}`,
		`{"choices":[{"text":"x","logprobs":{"tokens":"no"}}]}`,
	} {
		srv, _ := serve(t, "application/json", bad)
		s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(context.Background(), backends.Request{Model: "m", Prompt: "p", NoStream: true})
		if s.Err == nil || s.Err.Class != backends.ErrMalformed || !strings.Contains(s.Err.Message, "log") {
			t.Errorf("%s: error %v, want malformed", bad, s.Err)
		}
	}
}
