package ollama

import (
	"bufio"
	"errors"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// Lines as the decoder reads them: blank lines between chunks are skipped, a line that
// is not an object is malformed, an error object is the server's error (its message, or
// malformed when the error is not a string), and done_reason's words come through.
func TestDecoderLines(t *testing.T) {
	for _, c := range []struct {
		name, in string
		class    backends.ErrorClass // "": no error
		reason   string
		text     int
	}{
		{"blank lines skipped", "\n  \n{\"message\":{\"content\":\"hey\"}}\n", "", "", 3},
		{"not an object", "[1]\n", backends.ErrMalformed, "", 0},
		{"error", `{"error":"out of memory"}` + "\n", backends.ErrServer, "", 0},
		{"error not a string", `{"error":{"code":1}}` + "\n", backends.ErrMalformed, "", 0},
		{"error null", `{"error":null}` + "\n", backends.ErrServer, "", 0},
		{"stop", `{"done":true,"done_reason":"stop"}` + "\n", "", "stop", 0},
		{"length", `{"done":true,"done_reason":"length"}` + "\n", "", "length", 0},
		{"load", `{"done":true,"done_reason":"load"}` + "\n", "", "load", 0},
		{"unload", `{"done":true,"done_reason":"unload"}` + "\n", "", "unload", 0},
		{"another reason, escaped", `{"done":true,"done_reason":"cut\u0021"}` + "\n", "", "cut!", 0},
		{"no reason", `{"done":true,"done_reason":null}` + "\n", "", "", 0},
	} {
		var ch backends.Chunk
		err := newDecoder(bufio.NewReader(strings.NewReader(c.in))).Next(&ch)
		var e *backends.Error
		switch {
		case c.class == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.class != "" && (!errors.As(err, &e) || e.Class != c.class):
			t.Errorf("%s: error %v, want class %s", c.name, err, c.class)
		case c.class == backends.ErrServer && !strings.Contains(e.Message, "mid-stream"):
			t.Errorf("%s: %q", c.name, e.Message)
		case ch.FinishReason != c.reason || ch.Text != c.text:
			t.Errorf("%s: finish reason %q, %d text bytes; want %q, %d", c.name, ch.FinishReason, ch.Text, c.reason, c.text)
		}
	}
	if err := newDecoder(bufio.NewReader(strings.NewReader("\n\n"))).Next(new(backends.Chunk)); err == nil {
		t.Error("only blank lines: no error at the end of the stream")
	}
}
