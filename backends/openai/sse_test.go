package openai

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// SSE framing the recordings do not show: a last event that the stream ends without a
// blank line after, and a data field without the space after its colon.
func TestDecoderFraming(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"no blank line at the end", `data: {"choices":[{"delta":{"content":"hi"}}]}`},
		{"no space after the colon", "data:{\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"},
		// A field with nothing after its colon (an empty event name) is read and ignored.
		{"a field with an empty value", "event:\ndata: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"},
	} {
		d := newDecoder(bufio.NewReader(strings.NewReader(c.in)))
		var ch backends.Chunk
		if err := d.Next(&ch); err != nil || ch.Text != 2 || string(ch.Content) != "hi" {
			t.Errorf("%s: %v, text %d %q; want the event's 2 bytes", c.name, err, ch.Text, ch.Content)
		}
		if err := d.Next(new(backends.Chunk)); err != io.EOF {
			t.Errorf("%s: after the event %v, want io.EOF", c.name, err)
		}
	}
}
