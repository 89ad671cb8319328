package mockserver

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkChunk is the per-chunk rendering cost: it must not allocate.
func BenchmarkChunk(b *testing.B) {
	g := &generation{id: "req-1", p: params{model: "qwen2.5-7b"}, tokens: 1 << 30, finish: "length",
		created: 1767323045, quotedID: quote("req-1"), quotedModel: quote("qwen2.5-7b")}
	for _, tc := range []struct {
		name string
		enc  encoder
	}{
		{"openai-chat", openaiEncoder{kind: openaiChat}},
		{"openai-completions", openaiEncoder{kind: openaiText}},
		{"ollama-chat", ollamaEncoder{ollamaChat}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			now := time.Now()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				buf = tc.enc.chunk(buf[:0], g, i, i+1, false, now)
			}
		})
	}
}

// BenchmarkStreams runs C concurrent streams of 1-token chunks against a real loopback
// listener, read by a plain net/http client in the same process, and reports the tokens/s
// emitted and how late the server wrote chunks against their schedule (from Truth).
//
//	go test -run '^$' -bench Streams -benchtime 1x ./servers/mockserver/
func BenchmarkStreams(b *testing.B) {
	const tokens = 200
	for _, tc := range []struct {
		streams int
		tpot    time.Duration
	}{
		{1, 5 * time.Millisecond}, {64, 5 * time.Millisecond}, {500, 5 * time.Millisecond},
		{1000, 5 * time.Millisecond}, {2000, 5 * time.Millisecond}, {1000, 2 * time.Millisecond},
	} {
		b.Run(fmt.Sprintf("streams=%d/tpot=%s", tc.streams, tc.tpot), func(b *testing.B) {
			s := New(Config{TTFT: 20 * time.Millisecond, TPOT: tc.tpot, OutputTokens: tokens, RecordTruth: true})
			url, stop, err := s.Start("127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer stop()
			tr := &http.Transport{MaxIdleConnsPerHost: tc.streams, DisableCompression: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":` +
				fmt.Sprint(tokens) + `}`

			var elapsed time.Duration
			var failed int
			for b.Loop() {
				start := time.Now()
				var wg sync.WaitGroup
				var mu sync.Mutex
				for i := 0; i < tc.streams; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := readStream(client, url+"/v1/chat/completions", body); err != nil {
							mu.Lock()
							failed++
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				elapsed += time.Since(start)
			}
			var late []time.Duration
			var emitted int
			for _, t := range s.Truths() {
				for _, c := range t.Chunks {
					late = append(late, c.Written.Sub(c.Due))
					emitted += c.Tokens
				}
			}
			slices.Sort(late)
			if failed > 0 || len(late) == 0 {
				b.Fatalf("%d streams failed, %d chunks recorded", failed, len(late))
			}
			pct := func(p float64) float64 {
				return float64(late[int(p*float64(len(late)-1))]) / float64(time.Microsecond)
			}
			b.ReportMetric(float64(emitted)/elapsed.Seconds(), "tok/s")
			b.ReportMetric(pct(0.5), "late-p50-µs")
			b.ReportMetric(pct(0.99), "late-p99-µs")
			b.ReportMetric(pct(1), "late-max-µs")
		})
	}
}

// readStream reads one SSE stream line by line, as a client's decoder would.
func readStream(c *http.Client, url, body string) error {
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		_ = line
	}
}
