package openai

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/planrun/planrun/backends"
)

// wholeDecoder reads a non-streamed chat.completion or text_completion: the whole
// answer is one chunk, with the usage counts. It runs once per request, so plain
// encoding/json is fine here.
type wholeDecoder struct {
	r    *bufio.Reader
	id   string
	done bool
}

// NewWholeDecoder implements backends.WholeDecoder.
func (b *Backend) NewWholeDecoder(r *bufio.Reader) backends.Decoder {
	if b.responses {
		return &wholeResponsesDecoder{r: r}
	}
	if b.embed {
		return b.NewDecoder(r)
	}
	return &wholeDecoder{r: r}
}

// ResponseID implements backends.ResponseIDer.
func (d *wholeDecoder) ResponseID() string { return d.id }

type wholeResponse struct {
	ID      string `json:"id"`
	Choices []struct {
		Text    string `json:"text"`
		Message struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason   string                     `json:"finish_reason"`
		LogProbs       json.RawMessage            `json:"logprobs"`
		PromptLogProbs []map[string]promptLogProb `json:"prompt_logprobs"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens            int `json:"prompt_tokens"`
		CompletionTokens        int `json:"completion_tokens"`
		CompletionTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *answerError `json:"error"`
}

// answerError is the error object a non-streamed answer carries in place of its result.
type answerError struct {
	Message string `json:"message"`
}

// decodeWhole reads a whole non-streamed answer into v; errOf gives the error object it
// carried, if any, which is the server's failure.
func decodeWhole(r io.Reader, v any, errOf func() *answerError) error {
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return &backends.Error{Class: backends.ErrMalformed, Message: fmt.Sprintf("non-streamed response: %v", err)}
	}
	if e := errOf(); e != nil {
		return &backends.Error{Class: backends.ErrServer, Message: e.Message}
	}
	return nil
}

// Next implements backends.Decoder.
func (d *wholeDecoder) Next(c *backends.Chunk) error {
	if d.done {
		return io.EOF
	}
	d.done = true
	var v wholeResponse
	if err := decodeWhole(d.r, &v, func() *answerError { return v.Error }); err != nil {
		return err
	}
	d.id = v.ID
	for _, ch := range v.Choices {
		if t := ch.Text + ch.Message.Content; t != "" {
			c.Content = escaped(t)
		}
		c.Text += len(ch.Text) + len(ch.Message.Content)
		c.Reasoning += len(ch.Message.ReasoningContent) + len(ch.Message.Reasoning)
		c.FinishReason = ch.FinishReason
		if len(ch.LogProbs) > 0 && string(ch.LogProbs) != "null" {
			lp, err := parseLogProbs(ch.LogProbs)
			if err != nil {
				return err
			}
			c.LogProbs = append(c.LogProbs, lp...)
		}
		if ch.PromptLogProbs != nil {
			lp, err := promptLogProbs(ch.PromptLogProbs)
			if err != nil {
				return err
			}
			c.PromptLogProbs = lp
		}
		for i, tc := range ch.Message.ToolCalls {
			c.Tools = append(c.Tools, backends.ToolPart{Index: i, ID: escaped(tc.ID), Name: escaped(tc.Function.Name),
				Args: escaped(tc.Function.Arguments), End: true})
		}
	}
	if v.Usage != nil {
		c.Tokens, c.PromptTokens, c.OutputTokens = backends.TokensUsage, v.Usage.PromptTokens, v.Usage.CompletionTokens
		if d := v.Usage.CompletionTokensDetails; d != nil {
			c.ReasoningTokens = d.ReasoningTokens
		}
		if d := v.Usage.PromptTokensDetails; d != nil {
			c.CachedTokens = d.CachedTokens
		}
	}
	c.Done = true
	return nil
}

// escaped is text as the raw bytes of a JSON string (Chunk.Content's form).
func escaped(text string) []byte {
	b, _ := json.Marshal(text)
	return b[1 : len(b)-1]
}
