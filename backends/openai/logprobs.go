package openai

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/planrun/planrun/backends"
)

// Log-probabilities come only where a request asked for them (a quality phase's
// requests), so they are read with encoding/json from the raw value the scanner hands on.

// choiceLogProbs is a choice's "logprobs" in either API's form: chat's {"content":
// [{token, logprob, top_logprobs: [...]}]} or the completions API's {"tokens": [...],
// "token_logprobs": [...], "top_logprobs": [{token: logprob}]}.
type choiceLogProbs struct {
	Content       json.RawMessage      `json:"content"`
	Tokens        []string             `json:"tokens"`
	TokenLogProbs []*float64           `json:"token_logprobs"`
	TopLogProbs   []map[string]float64 `json:"top_logprobs"`
}

// parseLogProbs reads a choice's "logprobs" value.
func parseLogProbs(raw []byte) ([]backends.TokenLogProbs, error) {
	var v choiceLogProbs
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &backends.Error{Class: backends.ErrMalformed, Message: "log-probabilities: " + err.Error() + ": " + backends.Excerpt(raw)}
	}
	if v.Content != nil {
		return backends.ParseLogProbs(v.Content)
	}
	out := make([]backends.TokenLogProbs, len(v.Tokens))
	for i, tok := range v.Tokens {
		lp := 0.0
		if i < len(v.TokenLogProbs) && v.TokenLogProbs[i] != nil {
			lp = *v.TokenLogProbs[i]
		}
		out[i].LogProb = backends.NewLogProb(tok, lp)
		if i < len(v.TopLogProbs) {
			out[i].Top = rankedTop(v.TopLogProbs[i])
		}
	}
	return out, nil
}

// rankedTop is a {token: logprob} object as a list, most likely first (a JSON object's
// order does not survive decoding, so the order is restored from the values).
func rankedTop(m map[string]float64) []backends.LogProb {
	top := make([]backends.LogProb, 0, len(m))
	for tok, lp := range m {
		top = append(top, backends.NewLogProb(tok, lp))
	}
	slices.SortFunc(top, func(a, b backends.LogProb) int {
		return cmp.Or(cmp.Compare(b.LogProb, a.LogProb), cmp.Compare(a.Token, b.Token))
	})
	return top
}

// promptLogProb is one entry of vLLM's prompt_logprobs: {"<token id>": {"logprob",
// "rank", "decoded_token"}}, the prompt's own token among the position's top tokens.
type promptLogProb struct {
	LogProb      float64 `json:"logprob"`
	Rank         int     `json:"rank"`
	DecodedToken string  `json:"decoded_token"`
}

// promptLogProbs is vLLM's prompt_logprobs as Sample.PromptLogProbs: one position per
// prompt token (the first null: nothing precedes it), each position's tokens ranked.
func promptLogProbs(positions []map[string]promptLogProb) ([]backends.TokenLogProbs, error) {
	out := make([]backends.TokenLogProbs, len(positions))
	for i, pos := range positions {
		out[i].LogProb = backends.LogProb{ID: -1}
		for key, e := range pos {
			id, err := strconv.Atoi(key)
			if err != nil {
				return nil, &backends.Error{Class: backends.ErrMalformed, Message: "prompt_logprobs: token id " + strconv.Quote(key) + " is not a number"}
			}
			out[i].Top = append(out[i].Top, backends.LogProb{Token: e.DecodedToken, ID: id, LogProb: e.LogProb, Rank: e.Rank})
		}
		slices.SortFunc(out[i].Top, func(a, b backends.LogProb) int { return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.ID, b.ID)) })
	}
	return out, nil
}
