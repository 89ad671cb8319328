package quality

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/planrun/planrun/backends"
)

// Item is one line of an accuracy file: a prompt, its expected answer, and for the
// choice scorer the options the answer is one of.
type Item struct {
	Prompt  string   `json:"prompt"`
	Answer  string   `json:"answer"`
	Choices []string `json:"choices"`
	Line    int      `json:"-"`
	re      *regexp.Regexp
}

// ReadItems reads an accuracy file (JSONL) for scorer; a line that is not an item the
// scorer can use is an error naming it.
func ReadItems(path, scorer string) ([]Item, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var items []Item
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		it := Item{Line: line}
		if err := json.Unmarshal([]byte(text), &it); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if it.Prompt == "" || it.Answer == "" {
			return nil, fmt.Errorf("%s:%d: a line needs a \"prompt\" and an \"answer\"", path, line)
		}
		switch scorer {
		case "regex":
			if it.re, err = regexp.Compile(it.Answer); err != nil {
				return nil, fmt.Errorf("%s:%d: answer is not a regular expression: %v", path, line, err)
			}
		case "choice":
			if !containsFold(it.Choices, it.Answer) {
				return nil, fmt.Errorf("%s:%d: the answer %q is not one of its choices %q", path, line, it.Answer, it.Choices)
			}
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no items", path)
	}
	return items, nil
}

// Score reports whether output answers it by scorer: exact (the output, trimmed, is the
// answer, case folded), regex (the answer matches somewhere in the output) or choice
// (of the item's choices, the one the output names first, as whole words, is the
// answer).
func Score(scorer string, it Item, output string) bool {
	out := strings.TrimSpace(output)
	switch scorer {
	case "exact":
		return strings.EqualFold(out, strings.TrimSpace(it.Answer))
	case "regex":
		re := it.re
		if re == nil {
			re = regexp.MustCompile(it.Answer)
		}
		return re.MatchString(out)
	case "choice":
		// A choice is named where it stands as whole words ("B", not the b of "about").
		first, at := "", len(out)+1
		for _, c := range it.Choices {
			loc := regexp.MustCompile(`(?i)(^|\W)` + regexp.QuoteMeta(c) + `($|\W)`).FindStringIndex(out)
			if loc == nil {
				continue
			}
			if i := loc[0]; i < at || i == at && len(c) > len(first) {
				first, at = c, i
			}
		}
		return first != "" && strings.EqualFold(first, it.Answer)
	}
	return false
}

func containsFold(xs []string, s string) bool {
	for _, x := range xs {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Accuracy sends each item's prompt as the cell's workload would (the backend's own
// api, template and all), greedy, and counts the answers the scorer accepts.
func Accuracy(ctx context.Context, b backends.Backend, model string, items []Item, scorer string, maxTokens int, seed int64) (correct, requests int, err error) {
	for _, it := range items {
		s := b.Do(ctx, backends.Request{Model: model, Prompt: it.Prompt, MaxTokens: maxTokens, Greedy: true, Seed: &seed, KeepText: true})
		requests++
		if s.Err != nil {
			return correct, requests, fmt.Errorf("accuracy item at line %d: %w", it.Line, s.Err)
		}
		if Score(scorer, it, s.Text) {
			correct++
		}
	}
	return correct, requests, nil
}
