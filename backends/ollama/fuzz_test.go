package ollama

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// FuzzNDJSON feeds arbitrary bytes to the NDJSON decoder through a tiny read buffer and,
// when the input is one valid JSON object, holds the line scanner to encoding/json's
// reading of the text, thinking and done fields.
//
//	go test -run '^$' -fuzz FuzzNDJSON -fuzztime 20s ./backends/ollama/
func FuzzNDJSON(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.ndjson")
	for _, name := range files {
		b, _ := os.ReadFile(name)
		f.Add(b)
	}
	f.Add([]byte(`{"error":"model not found"}`))
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
		}
		var m map[string]any
		if !json.Valid(in) || json.Unmarshal(in, &m) != nil || m == nil {
			return
		}
		var c backends.Chunk
		var sc jsonscan.Scanner
		if err := parseLine(&sc, bytes.TrimSpace(in), &c); err != nil {
			return // the wrong type somewhere: covered by the decoder loop above
		}
		text, thinking := 0, 0
		var s1 string
		if msg, ok := m["message"].(map[string]any); ok {
			s1, _ = msg["content"].(string)
			s2, _ := msg["thinking"].(string)
			text, thinking = len(s1), len(s2)
		}
		r, _ := m["response"].(string)
		// The content text, where one field carries it (Content is the last of the two).
		if got := jsonscan.Unquote(c.Content); (s1 == "" || r == "") && got != s1+r {
			t.Fatalf("content %q; encoding/json says %q", got, s1+r)
		}
		th, _ := m["thinking"].(string)
		done, _ := m["done"].(bool)
		if c.Text != text+len(r) || c.Reasoning != thinking+len(th) || c.Done != done {
			t.Fatalf("chunk %+v; encoding/json says text %d reasoning %d done %v", c, text+len(r), thinking+len(th), done)
		}
	})
}
