package backends_test

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// The per-request figures derived from a Sample.
func TestSampleFigures(t *testing.T) {
	type figures struct {
		TTFT       time.Duration
		TTFTOK     bool
		TPOT       time.Duration
		TPOTOK     bool
		Rate       float64
		RateOK     bool
		Send       time.Duration
		SendOK     bool
		E2E        time.Duration
		ITL        []time.Duration
		OK         bool
		Unmeasured bool
	}
	for _, c := range []struct {
		name string
		s    backends.Sample
		want figures
	}{
		{"streamed", backends.Sample{Connect: 2 * ms, Wrote: 5 * ms, FirstToken: 10 * ms, End: 100 * ms, OutputTokens: 4, Chunks: 3,
			ChunkArrivals: []time.Duration{10 * ms, 25 * ms, 100 * ms}},
			figures{TTFT: 10 * ms, TTFTOK: true, TPOT: 30 * ms, TPOTOK: true, Rate: 1 / 0.030, RateOK: true, Send: 3 * ms, SendOK: true,
				E2E: 100 * ms, ITL: []time.Duration{15 * ms, 75 * ms}, OK: true}},
		// Reasoning chunks are tokens: a reasoning-only answer has a TTFT and a TPOT.
		{"reasoning only", backends.Sample{FirstToken: 10 * ms, End: 30 * ms, OutputTokens: 2, ReasoningChunks: 2, Wrote: 1 * ms,
			ChunkArrivals: []time.Duration{10 * ms, 30 * ms}},
			figures{TTFT: 10 * ms, TTFTOK: true, TPOT: 20 * ms, TPOTOK: true, Rate: 50, RateOK: true, Send: 1 * ms, SendOK: true, E2E: 30 * ms,
				ITL: []time.Duration{20 * ms}, OK: true}},
		// As many reasoning chunks as content chunks: both count (not one against the other).
		{"reasoning and content", backends.Sample{FirstToken: 10 * ms, End: 50 * ms, OutputTokens: 3, Chunks: 1, ReasoningChunks: 1},
			figures{TTFT: 10 * ms, TTFTOK: true, TPOT: 20 * ms, TPOTOK: true, Rate: 50, RateOK: true, E2E: 50 * ms, OK: true}},
		{"one token", backends.Sample{FirstToken: 10 * ms, End: 10 * ms, OutputTokens: 1, Chunks: 1, ChunkArrivals: []time.Duration{10 * ms}},
			figures{TTFT: 10 * ms, TTFTOK: true, E2E: 10 * ms, OK: true}},
		// Two tokens in one chunk: a TPOT of zero has no rate.
		{"one chunk two tokens", backends.Sample{FirstToken: 10 * ms, End: 10 * ms, OutputTokens: 2, Chunks: 1},
			figures{TTFT: 10 * ms, TTFTOK: true, TPOT: 0, TPOTOK: true, E2E: 10 * ms, OK: true}},
		{"no chunks", backends.Sample{End: 50 * ms, OutputTokens: 5, Wrote: 1 * ms, Connect: 3 * ms},
			figures{E2E: 50 * ms, Send: 0, SendOK: true, OK: true}},
		{"unstreamed", backends.Sample{FirstToken: 40 * ms, End: 40 * ms, OutputTokens: 5, Chunks: 1, Unstreamed: true},
			figures{E2E: 40 * ms, OK: true}},
		{"failed", backends.Sample{End: 5 * ms, Err: &backends.Error{Class: backends.ErrRefused}},
			figures{E2E: 5 * ms}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f figures
			f.TTFT, f.TTFTOK = c.s.TTFT()
			if !f.TTFTOK {
				f.TTFT = 0
			}
			f.TPOT, f.TPOTOK = c.s.TPOT()
			f.Rate, f.RateOK = c.s.DecodeRate()
			f.Send, f.SendOK = c.s.SendDelay()
			f.E2E, f.ITL, f.OK = c.s.E2E(), c.s.ITL(), c.s.OK()
			if !reflect.DeepEqual(f, c.want) {
				t.Fatalf("\n got %+v\nwant %+v", f, c.want)
			}
		})
	}
}

func TestRequestMessages(t *testing.T) {
	r := backends.Request{Prompt: "and now?", History: []backends.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}}
	want := []backends.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "and now?"}}
	if got := r.Messages(); !reflect.DeepEqual(got, want) || cap(got) != 3 {
		t.Fatalf("Messages() = %v (cap %d), want %v", got, cap(got), want)
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 40) // longer than the 16-byte buffer
	lr := backends.LineReader{R: bufio.NewReaderSize(strings.NewReader("a\r\n"+long+"\n\nlast"), 16)}
	for _, want := range []string{"a", long, "", "last"} {
		got, err := lr.ReadLine()
		if err != nil || string(got) != want {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	if got, err := lr.ReadLine(); err != io.EOF || got != nil {
		t.Fatalf("at the end: %q, %v; want io.EOF", got, err)
	}
	broken := errors.New("reset")
	lr = backends.LineReader{R: bufio.NewReaderSize(io.MultiReader(strings.NewReader("half"), errReader{broken}), 16)}
	if got, err := lr.ReadLine(); err != broken || got != nil {
		t.Fatalf("a read error mid-line: %q, %v; want the error", got, err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
