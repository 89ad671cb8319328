package ollama

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// A raw request with top log-probabilities goes to /api/generate whatever the backend's
// api, and each line's logprobs reach the Sample in order, alternatives and all; a
// plain request asks for none.
func TestLogProbs(t *testing.T) {
	var path, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		path, body = r.URL.Path, string(b)
		io.WriteString(w, `{"response":" the","done":false,"logprobs":[{"token":" the","logprob":-0.25,"bytes":[32,116,104,101],"top_logprobs":[{"token":" the","logprob":-0.25},{"token":" a","logprob":-1.5}]}]}`+"\n")
		io.WriteString(w, `{"response":" cat","done":false,"logprobs":[{"token":" cat","logprob":-0.75,"top_logprobs":[{"token":" dog","logprob":-0.7},{"token":" cat","logprob":-0.75}]}]}`+"\n")
		io.WriteString(w, `{"response":"","done":true,"done_reason":"length","eval_count":2,"prompt_eval_count":3}`+"\n")
	}))
	defer srv.Close()
	b := mustNew(t, backends.Config{URL: srv.URL})
	s := b.Do(context.Background(), backends.Request{Model: "tiny", Prompt: "hello", MaxTokens: 2, Raw: true, TopLogProbs: 2})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if path != "/api/generate" || !strings.Contains(body, `"raw":true`) || !strings.Contains(body, `"top_logprobs":2`) {
		t.Errorf("sent %s %s", path, body)
	}
	if len(s.LogProbs) != 2 {
		t.Fatalf("log-probabilities %+v, want 2 positions", s.LogProbs)
	}
	p := s.LogProbs[1]
	if p.Token != " cat" || p.LogProb.LogProb != -0.75 || p.ID != -1 || len(p.Top) != 2 || p.Top[0].Token != " dog" || p.Top[0].LogProb != -0.7 {
		t.Errorf("second position %+v", p)
	}
	if s.OutputTokens != 2 || s.PromptTokens != 3 {
		t.Errorf("tokens %d, prompt %d", s.OutputTokens, s.PromptTokens)
	}
	b.Do(context.Background(), backends.Request{Model: "tiny", Prompt: "hello", MaxTokens: 2})
	if path != "/api/chat" || strings.Contains(body, "logprobs") || strings.Contains(body, "raw") {
		t.Errorf("a plain request: %s %s", path, body)
	}
}

// A logprobs value that is not the API's shape is a malformed line, not a silent gap.
func TestLogProbsMalformed(t *testing.T) {
	var ch backends.Chunk
	var sc = newDecoder(nil).sc
	err := parseLine(&sc, []byte(`{"response":"x","logprobs":{"token":"x"}}`), &ch)
	if e, ok := err.(*backends.Error); !ok || e.Class != backends.ErrMalformed {
		t.Errorf("error %v, want malformed", err)
	}
}
