package backends

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// EmbeddingsAPI is the api value of a backend that serves embeddings (OpenAI's
// /v1/embeddings, Ollama's /api/embed): its requests carry Request.Inputs, and its
// samples count Sample.Inputs and the server's input tokens instead of output tokens.
const EmbeddingsAPI = "embeddings"

// EmbeddingInputs are the texts of an embeddings request: req.Inputs, or its Prompt
// alone (a probe's test request).
func EmbeddingInputs(req Request) []string {
	if len(req.Inputs) > 0 {
		return req.Inputs
	}
	return []string{req.Prompt}
}

// EmbeddingsAnswer is what an embeddings response says, in the fields the servers use:
// OpenAI's data and usage.prompt_tokens, Ollama's embeddings and prompt_eval_count.
type EmbeddingsAnswer struct {
	Data       []json.RawMessage `json:"data"`
	Embeddings []json.RawMessage `json:"embeddings"`
	Usage      *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
	PromptEvalCount *int `json:"prompt_eval_count"`
	Error           any  `json:"error"`
}

// EmbeddingsDecoder reads one embeddings response as one chunk: the inputs embedded and
// the server's input token count (TokensUsage for OpenAI's usage, TokensServer for
// Ollama's prompt_eval_count). It runs once per request: encoding/json is fine, the
// vectors themselves are kept raw and only counted.
type EmbeddingsDecoder struct {
	R    *bufio.Reader
	done bool
}

// Next implements Decoder.
func (d *EmbeddingsDecoder) Next(c *Chunk) error {
	if d.done {
		return io.EOF
	}
	d.done = true
	var v EmbeddingsAnswer
	if err := json.NewDecoder(d.R).Decode(&v); err != nil {
		return &Error{Class: ErrMalformed, Message: fmt.Sprintf("embeddings response: %v", err)}
	}
	if v.Error != nil {
		return &Error{Class: ErrServer, Message: fmt.Sprintf("embeddings response: %v", v.Error)}
	}
	c.Inputs = len(v.Data) + len(v.Embeddings)
	switch {
	case v.Usage != nil:
		c.Tokens, c.PromptTokens = TokensUsage, v.Usage.PromptTokens
	case v.PromptEvalCount != nil:
		c.Tokens, c.PromptTokens = TokensServer, *v.PromptEvalCount
	}
	c.FinishReason, c.Done = "stop", true
	return nil
}
