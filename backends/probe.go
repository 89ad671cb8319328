package backends

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/suggest"
)

// ProbeModels checks each wanted model id against the server's list and sends one tiny
// request (max 2 tokens) per present model to see whether the server reports its own
// token count. Shared by the adapters so every probe reads the same. refused is the
// class of a test request the server refused for its key (401, 403): a server may list
// models to anyone and still refuse every request.
func ProbeModels(ctx context.Context, be Backend, have, want []string, url string) (present map[string]bool, usage *bool, problems []string, refused ErrorClass) {
	present = make(map[string]bool, len(want))
	for _, id := range want {
		present[id] = Lists(have, id)
		if !present[id] {
			problems = append(problems, AbsentModel(id, url, have))
		}
	}
	for _, id := range want {
		if !present[id] {
			continue
		}
		s := be.Do(ctx, Request{ID: "probe/" + id, Model: id, Prompt: "Say hi.", MaxTokens: 2})
		if s.Err != nil {
			problems = append(problems, "a test request to model "+strconv.Quote(id)+" failed: "+s.Err.Error())
			if s.Err.Class == ErrUnauthorized || s.Err.Class == ErrForbidden {
				refused = s.Err.Class
			}
			continue
		}
		reported := s.TokenSource != TokensChunks
		if usage == nil || !reported {
			usage = &reported
		}
	}
	return present, usage, problems, refused
}

// AbsentModel says that the server at url does not list model id: what it has, and the
// name the id most likely meant. One sentence for probe, apply and the adapters alike.
func AbsentModel(id, url string, have []string) string {
	return "model " + strconv.Quote(id) + " is not served at " + url + "; the server has: " + ModelList(have) + "." + NearestModel(id, have)
}

// NearestModel is ` Did you mean "x"?` for the listed model nearest to id (Ollama's
// implicit ":latest" left off, as SameModel does), or "" when none is near.
func NearestModel(id string, have []string) string {
	names := make([]string, len(have))
	for i, m := range have {
		names[i] = strings.TrimSuffix(m, ":latest")
	}
	return suggest.DidYouMean(strings.TrimSuffix(id, ":latest"), names)
}

// Lists reports whether a server's model list names model id: an entry that is the same
// model (SameModel), or a wildcard entry that matches it ("*", "openai/*"; a star stands
// for any text, slashes too): a gateway's wildcard route, or the mock server serving any
// name, which lists "*".
func Lists(models []string, id string) bool {
	for _, m := range models {
		if SameModel(m, id) || strings.Contains(m, "*") && wildcard(m, id) {
			return true
		}
	}
	return false
}

// wildcard matches s against pattern, where each * stands for any text.
func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// SameModel reports whether two model names name the same model: equal, or equal once
// Ollama's implicit ":latest" tag is dropped ("tiny" is listed as "tiny:latest"). It is
// the one rule for matching a plan's model id against what a server lists.
func SameModel(a, b string) bool {
	return a == b || strings.TrimSuffix(a, ":latest") == strings.TrimSuffix(b, ":latest")
}

// CaseOnly returns the name in a server's model list that is model id but for case
// ("tiny:latest" for "Tiny"), or "" when none is, or when the list names id itself
// (Lists). Ollama answers to either spelling, but its model list, digest and loaded-model
// memory go by the listed one, which SameModel matches exactly.
func CaseOnly(models []string, id string) string {
	if Lists(models, id) {
		return ""
	}
	bare := func(s string) string { return strings.TrimSuffix(strings.ToLower(s), ":latest") }
	for _, m := range models {
		if bare(m) == bare(id) {
			return m
		}
	}
	return ""
}

// ModelList prints a server's models for a message, capped so a gateway with hundreds
// stays readable.
func ModelList(models []string) string {
	if len(models) == 0 {
		return "no models"
	}
	const max = 20
	if len(models) > max {
		return strings.Join(models[:max], ", ") + fmt.Sprintf(" and %d more", len(models)-max)
	}
	return strings.Join(models, ", ")
}

// ModelAbsent starts an adapter's Explain: after a 404 or other 4xx it reads the
// server's model list and says whether model is missing from it (by Lists). ok is
// false for other failures and when the list cannot be read: there is nothing to add.
func ModelAbsent(ctx context.Context, e *Error, model string, list func(context.Context) ([]string, *Error)) (models []string, absent, ok bool) {
	if e.Class != ErrNotFound && e.Class != ErrHTTP4xx {
		return nil, false, false
	}
	models, lerr := list(ctx)
	if lerr != nil {
		return nil, false, false
	}
	return models, !Lists(models, model), true
}
