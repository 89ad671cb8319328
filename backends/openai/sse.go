package openai

import (
	"bufio"
	"bytes"
	"io"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// decoder reads a Server-Sent Events body of OpenAI chunks. It follows the SSE rules
// that servers actually exercise: events end at a blank line, `:` lines are comments
// (keep-alives), several `data:` lines join with "\n", other fields are ignored. A last
// event without its blank line is still dispatched at the end of the body.
type decoder struct {
	lines backends.LineReader
	data  []byte // the pending event's data, reused across events
	has   bool   // a data field was seen for the pending event
	sc    jsonscan.Scanner
	// id is the response's "id", read from the first event only: every chunk repeats it.
	id      string
	sawData bool
	// parse reads one event's data: parseChunk for chat and completions, parseEvent for
	// the Responses API.
	parse EventParser
}

func newDecoder(r *bufio.Reader) *decoder {
	return &decoder{lines: backends.LineReader{R: r}, data: make([]byte, 0, 1024), parse: parseChunk}
}

var done = []byte("[DONE]")

// Next implements backends.Decoder.
func (d *decoder) Next(c *backends.Chunk) error {
	for {
		line, err := d.lines.ReadLine()
		if err != nil {
			if err == io.EOF && d.has {
				d.has = false
				return d.dispatch(c)
			}
			return err
		}
		if len(line) == 0 {
			if d.has {
				d.has = false
				return d.dispatch(c)
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if string(name) != "data" {
			continue
		}
		if d.has {
			d.data = append(d.data, '\n')
		} else {
			d.data = d.data[:0]
			d.has = true
		}
		d.data = append(d.data, value...)
	}
}

func (d *decoder) dispatch(c *backends.Chunk) error {
	if bytes.Equal(bytes.TrimSpace(d.data), done) {
		c.Done = true
		return nil
	}
	var id *string
	if !d.sawData {
		d.sawData = true
		id = &d.id
	}
	return d.parse(&d.sc, d.data, c, id)
}

// ResponseID implements backends.ResponseIDer.
func (d *decoder) ResponseID() string { return d.id }

// EventParser reads one SSE event's data into a chunk; a non-nil id receives the
// response's id (asked on the first event only).
type EventParser func(sc *jsonscan.Scanner, data []byte, c *backends.Chunk, id *string) error

// NewEventDecoder is this SSE reader with another protocol's events: what the Messages
// API's adapter decodes its stream with, so there is one SSE reader.
func NewEventDecoder(r *bufio.Reader, parse EventParser) backends.Decoder {
	d := newDecoder(r)
	d.parse = parse
	return d
}
