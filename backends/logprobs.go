package backends

// LogProb is one token's log-probability (natural log) at a position, as the server
// returned it.
type LogProb struct {
	// Token is the token's text as the server names it.
	Token string
	// ID is the token's id where the server gives it (vLLM with
	// return_tokens_as_token_ids, prompt log-probabilities), else -1.
	ID      int
	LogProb float64
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
