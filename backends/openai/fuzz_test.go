package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// FuzzSSE feeds arbitrary bytes to the SSE decoder (through a tiny read buffer, so long
// lines take the reassembly path) and, when the input is one valid JSON value, holds
// the chunk scanner to encoding/json's reading of the same fields.
//
//	go test -run '^$' -fuzz FuzzSSE -fuzztime 20s ./backends/openai/
func FuzzSSE(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, name := range files {
		b, _ := os.ReadFile(name)
		f.Add(b)
	}
	f.Add([]byte(`{"choices":[{"delta":{"content":"a\u00e9\ud83d\ude00","reasoning":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	f.Add([]byte(`{"error":{"message":"boom"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := newDecoder(bufio.NewReaderSize(bytes.NewReader(in), 16))
		for i := 0; i < len(in)+2; i++ {
			var c backends.Chunk
			err := d.Next(&c)
			if err == io.EOF {
				break
			}
			var e *backends.Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("decoder error of no class: %v", err)
			}
			if c.Text < 0 || c.Reasoning < 0 {
				t.Fatalf("negative length %+v", c)
			}
		}
		if !json.Valid(in) {
			return
		}
		var c backends.Chunk
		var sc jsonscan.Scanner
		err := parseChunk(&sc, in, &c, nil)
		want, texts, wantClass := reference(in)
		var e *backends.Error
		gotClass := backends.ErrNone
		if errors.As(err, &e) {
			gotClass = e.Class
		} else if err != nil {
			t.Fatalf("error of no class: %v", err)
		}
		if gotClass != wantClass {
			t.Fatalf("class %q, encoding/json says %q (%v)", gotClass, wantClass, err)
		}
		content := c.Content
		c.Content = nil
		if err == nil && want.PromptTokens >= 0 && want.OutputTokens >= 0 && want.ReasoningTokens >= 0 && !reflect.DeepEqual(c, want) {
			t.Fatalf("chunk %+v\nencoding/json says %+v", c, want)
		}
		// The content text, where one field carries it (Content is the last of several).
		if err == nil && len(texts) <= 1 && jsonscan.Unquote(content) != strings.Join(texts, "") {
			t.Fatalf("content %q, encoding/json says %q", jsonscan.Unquote(content), texts)
		}
	})
}

// reference reads the same fields with encoding/json, following the scanner's rules:
// the wrong type where a field is read is malformed, a repeated key's last value wins.
// texts are the event's non-empty content strings, in order.
func reference(in []byte) (c backends.Chunk, texts []string, class backends.ErrorClass) {
	var top any
	json.Unmarshal(in, &top)
	m, ok := top.(map[string]any)
	if !ok {
		return c, nil, backends.ErrMalformed
	}
	bad := false
	str := func(v any) int {
		switch s := v.(type) {
		case nil:
		case string:
			return len(s)
		default:
			bad = true
		}
		return 0
	}
	content := func(v any) int {
		if s, ok := v.(string); ok && s != "" {
			texts = append(texts, s)
		}
		return str(v)
	}
	obj := func(v any) map[string]any {
		o, ok := v.(map[string]any)
		if !ok && v != nil {
			bad = true
		}
		return o
	}
	num := func(v any) int {
		switch n := v.(type) {
		case nil:
		case float64:
			if math.Abs(n) < 1e15 {
				return int(n)
			}
			return -1 // beyond what the test compares
		default:
			bad = true
		}
		return 0
	}
	switch ch := m["choices"].(type) {
	case nil:
	case []any:
		for _, e := range ch {
			o := obj(e)
			if o == nil {
				continue
			}
			for _, k := range []string{"delta", "message"} {
				if d := obj(o[k]); d != nil {
					c.Text += content(d["content"])
					c.Reasoning += str(d["reasoning_content"]) + str(d["reasoning"])
				}
			}
			c.Text += content(o["text"])
			if f, ok := o["finish_reason"].(string); ok && f != "" {
				c.FinishReason = f
			} else {
				str(o["finish_reason"])
			}
		}
	default:
		bad = true
	}
	if u := obj(m["usage"]); u != nil {
		c.Tokens = backends.TokensUsage
		c.PromptTokens = num(u["prompt_tokens"])
		c.OutputTokens = num(u["completion_tokens"])
		if d := obj(u["completion_tokens_details"]); d != nil {
			c.ReasoningTokens = num(d["reasoning_tokens"])
		}
	}
	if bad {
		return c, texts, backends.ErrMalformed
	}
	if _, isErr := m["error"]; isErr {
		return c, texts, backends.ErrServer
	}
	return c, texts, backends.ErrNone
}
