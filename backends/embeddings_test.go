package backends_test

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// One embeddings answer is one chunk: the inputs embedded and the server's own input
// count, OpenAI's usage or Ollama's prompt_eval_count; then the stream ends.
func TestEmbeddingsDecoder(t *testing.T) {
	for _, c := range []struct {
		name, body string
		inputs     int
		tokens     int
		source     backends.TokenSource
		class      backends.ErrorClass
	}{
		{"openai", `{"data":[{"embedding":[0.1]},{"embedding":[0.2]}],"usage":{"prompt_tokens":7}}`, 2, 7, backends.TokensUsage, ""},
		{"ollama", `{"embeddings":[[0.1],[0.2],[0.3]],"prompt_eval_count":9}`, 3, 9, backends.TokensServer, ""},
		{"no count", `{"embeddings":[[0.1]]}`, 1, 0, "", ""},
		{"error", `{"error":{"message":"no such model"}}`, 0, 0, "", backends.ErrServer},
		{"not json", `<html>`, 0, 0, "", backends.ErrMalformed},
	} {
		d := &backends.EmbeddingsDecoder{R: bufio.NewReader(strings.NewReader(c.body))}
		var ch backends.Chunk
		err := d.Next(&ch)
		var e *backends.Error
		switch {
		case c.class != "":
			if !errors.As(err, &e) || e.Class != c.class || !strings.HasPrefix(e.Message, "embeddings response: ") {
				t.Errorf("%s: %v, want class %s", c.name, err, c.class)
			}
			continue
		case err != nil:
			t.Fatalf("%s: %v", c.name, err)
		}
		if ch.Inputs != c.inputs || ch.PromptTokens != c.tokens || ch.Tokens != c.source || !ch.Done || ch.FinishReason != "stop" {
			t.Errorf("%s: chunk %+v, want %d inputs, %d tokens from %q, done", c.name, ch, c.inputs, c.tokens, c.source)
		}
		if err := d.Next(&ch); err != io.EOF {
			t.Errorf("%s: after the answer %v, want io.EOF", c.name, err)
		}
	}
	if in := backends.EmbeddingInputs(backends.Request{Prompt: "probe"}); len(in) != 1 || in[0] != "probe" {
		t.Errorf("a probe's inputs %q, want its prompt", in)
	}
	if in := backends.EmbeddingInputs(backends.Request{Prompt: "x", Inputs: []string{"a", "b"}}); len(in) != 2 {
		t.Errorf("inputs %q, want the request's two", in)
	}
}
