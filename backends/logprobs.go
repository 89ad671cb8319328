package backends

import (
	"encoding/json"
	"strconv"
	"strings"
)

// LogProb is one token's log-probability (natural log) at a position, as the server
// returned it.
type LogProb struct {
	// Token is the token's text as the server names it.
	Token string
	// ID is the token's id where the server gives it (vLLM with
	// return_tokens_as_token_ids, prompt log-probabilities), else -1.
	ID      int
	LogProb float64
	// Rank is the token's rank among its position's tokens (1 the most likely) where the
	// server says (prompt log-probabilities), else 0.
	Rank int
}

// SameToken reports whether a and b name the same token: by id where both have one,
// else by text (one tokenizer's tokens are unique strings).
func (a LogProb) SameToken(b LogProb) bool {
	if a.ID >= 0 && b.ID >= 0 {
		return a.ID == b.ID
	}
	return a.Token == b.Token
}

// TokenLogProbs is one position of a generated text (or of a prompt, for prompt
// log-probabilities): the token there with its log-probability, and the most likely
// tokens at that position with theirs (Request.TopLogProbs of them; the server's order).
type TokenLogProbs struct {
	LogProb
	Top []LogProb
}

// wireLogProb is the log-probability object Ollama's native API and OpenAI's chat API
// share: {"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}.
type wireLogProb struct {
	Token   string  `json:"token"`
	LogProb float64 `json:"logprob"`
	Top     []struct {
		Token   string  `json:"token"`
		LogProb float64 `json:"logprob"`
	} `json:"top_logprobs"`
}

// ParseLogProbs reads a JSON array of such objects (Ollama's "logprobs", OpenAI chat's
// "logprobs": {"content": [...]}'s array); null is none. Tokens named "token_id:N"
// (vLLM's return_tokens_as_token_ids) get their id. It runs only where a request asked
// for log-probabilities, so encoding/json is fine here.
func ParseLogProbs(raw []byte) ([]TokenLogProbs, error) {
	var w []wireLogProb
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, &Error{Class: ErrMalformed, Message: "log-probabilities: " + err.Error() + ": " + Excerpt(raw)}
	}
	out := make([]TokenLogProbs, len(w))
	for i, t := range w {
		out[i].LogProb = NewLogProb(t.Token, t.LogProb)
		out[i].Top = make([]LogProb, len(t.Top))
		for j, a := range t.Top {
			out[i].Top[j] = NewLogProb(a.Token, a.LogProb)
		}
	}
	return out, nil
}

// NewLogProb is a token's log-probability, its id read from a "token_id:N" name.
func NewLogProb(token string, logProb float64) LogProb {
	id := -1
	if n, ok := strings.CutPrefix(token, "token_id:"); ok {
		if v, err := strconv.Atoi(n); err == nil && v >= 0 {
			id = v
		}
	}
	return LogProb{Token: token, ID: id, LogProb: logProb}
}
