package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// scanLines reads one JSON object per line (JSONL and Mooncake); blank lines are skipped.
func scanLines(src *bufio.Reader, spec Spec, keep func(Row) error) error {
	parse := spec.jsonlRow
	if spec.Format == FormatMooncake {
		last := time.Duration(-1)
		parse = func(line int, b []byte) (Row, error) {
			r, err := spec.mooncakeRow(line, b)
			if err == nil && r.Timestamp < last {
				err = lineError(spec, line, "timestamp %s is before the previous row's %s: a trace must be in time order", ms(r.Timestamp), ms(last))
			}
			last = r.Timestamp
			return r, err
		}
	}
	return eachLine(src, func(line int, b []byte) error {
		r, err := parse(line, b)
		if err != nil {
			return err
		}
		return keep(r)
	})
}

// eachLine calls fn with every non-blank line and its number (from 1).
func eachLine(src *bufio.Reader, fn func(line int, b []byte) error) error {
	for line := 1; ; line++ {
		b, err := src.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			if ferr := fn(line, b); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// jsonlRow decodes a JSONL row through the spec's field names.
func (s Spec) jsonlRow(line int, b []byte) (Row, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return Row{}, lineError(s, line, "not a JSON object: %v", err)
	}
	field := s.PromptField
	if field == "" {
		field = "prompt"
	}
	r := Row{Line: line}
	raw, ok := obj[field]
	if !ok || json.Unmarshal(raw, &r.Prompt) != nil || strings.TrimSpace(r.Prompt) == "" {
		return Row{}, lineError(s, line, "no non-empty string field %q", field)
	}
	r.PromptWords = len(strings.Fields(r.Prompt))
	if s.OutputTokensField != "" {
		if raw, ok := obj[s.OutputTokensField]; ok {
			if json.Unmarshal(raw, &r.OutputTokens) != nil || r.OutputTokens < 0 {
				return Row{}, lineError(s, line, "field %q is not a whole number of tokens: %s", s.OutputTokensField, raw)
			}
		}
	}
	return r, nil
}

// mooncakeRow decodes a Mooncake trace row: timestamp (ms), input_length, output_length
// and hash_ids, all required.
func (s Spec) mooncakeRow(line int, b []byte) (Row, error) {
	var m struct {
		Timestamp    *float64 `json:"timestamp"`
		InputLength  *int     `json:"input_length"`
		OutputLength *int     `json:"output_length"`
		HashIDs      []int64  `json:"hash_ids"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Row{}, lineError(s, line, "not a Mooncake row: %v", err)
	}
	switch {
	case m.Timestamp == nil || *m.Timestamp < 0:
		return Row{}, lineError(s, line, "timestamp (ms, at least 0) is missing or negative")
	case m.InputLength == nil || *m.InputLength < 1:
		return Row{}, lineError(s, line, "input_length (tokens, at least 1) is missing or below 1")
	case m.OutputLength == nil || *m.OutputLength < 1:
		return Row{}, lineError(s, line, "output_length (tokens, at least 1) is missing or below 1")
	}
	// To the nanosecond: a fraction of a millisecond is part of the schedule.
	at := time.Duration(math.Round(*m.Timestamp * float64(time.Millisecond)))
	return Row{Line: line, Timestamp: at, InputLength: *m.InputLength, OutputLength: *m.OutputLength,
		OutputTokens: *m.OutputLength, HashIDs: m.HashIDs}, nil
}

// shareGPTEntry is one conversation of the ShareGPT layout.
type shareGPTEntry struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// scanShareGPT reads ShareGPT conversations, either as one JSON array (the published
// files) or one per line. The prompt is the first human turn; the expected output is the
// first gpt answer after it. Conversations without both are skipped, as vLLM's bench does.
func scanShareGPT(src *bufio.Reader, spec Spec, keep func(Row) error) error {
	first, err := peekNonSpace(src)
	if err != nil || first != '[' {
		return eachLine(src, func(line int, b []byte) error {
			var e shareGPTEntry
			if err := json.Unmarshal(b, &e); err != nil {
				return lineError(spec, line, "not a ShareGPT conversation: %v", err)
			}
			return keepConversation(e, line, keep)
		})
	}
	lines := &lineCounter{r: src, line: 1}
	dec := json.NewDecoder(lines)
	if _, err := dec.Token(); err != nil {
		return lineError(spec, lines.line, "%v", err)
	}
	for dec.More() {
		line := lines.at(dec)
		var e shareGPTEntry
		if err := dec.Decode(&e); err != nil {
			return lineError(spec, line, "not a ShareGPT conversation: %v", err)
		}
		if err := keepConversation(e, line, keep); err != nil {
			return err
		}
	}
	return nil
}

func keepConversation(e shareGPTEntry, line int, keep func(Row) error) error {
	for i, turn := range e.Conversations {
		if turn.From != "human" || strings.TrimSpace(turn.Value) == "" {
			continue
		}
		for _, ans := range e.Conversations[i+1:] {
			if ans.From == "gpt" {
				return keep(Row{Line: line, Prompt: turn.Value, PromptWords: len(strings.Fields(turn.Value)),
					OutputWords: len(strings.Fields(ans.Value))})
			}
		}
		return nil
	}
	return nil
}

// scanText cuts a plain corpus into prompts of spec.TextWords words, in file order; a
// tail shorter than that is dropped.
func scanText(src *bufio.Reader, spec Spec, keep func(Row) error) error {
	n := spec.TextWords
	if n < 1 {
		return fmt.Errorf("%s: a text dataset needs a prompt length in words", spec.Path)
	}
	words := make([]string, 0, n)
	start := 0
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for line := 1; sc.Scan(); line++ {
		for _, w := range strings.Fields(sc.Text()) {
			if len(words) == 0 {
				start = line
			}
			words = append(words, w)
			if len(words) == n {
				if err := keep(Row{Line: start, Prompt: strings.Join(words, " "), PromptWords: n}); err != nil {
					return err
				}
				words = words[:0]
			}
		}
	}
	return sc.Err()
}

func peekNonSpace(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return 0, err
		}
		if b[0] != ' ' && b[0] != '\t' && b[0] != '\n' && b[0] != '\r' {
			return b[0], nil
		}
		r.ReadByte()
	}
}

// lineCounter counts the newlines read through it, so the decoder's position can be
// named as a line without keeping the file.
type lineCounter struct {
	r    io.Reader
	line int
}

// at is the line of the next value the decoder will read: json.Decoder reads ahead, so
// the newlines it holds unread, past the separators before that value, are taken back off.
func (c *lineCounter) at(dec *json.Decoder) int {
	ahead, _ := io.ReadAll(dec.Buffered())
	ahead = bytes.TrimLeft(ahead, " \t\r\n,")
	return c.line - bytes.Count(ahead, []byte{'\n'})
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.line += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}

// ms writes a trace time as the file does: milliseconds, with a fraction only if it
// has one.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}
