package mockserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSummaries checks the reduced truth a load benchmark reads, on the fake clock where
// every figure is known: token i is written at TTFT + i*TPOT after admission (plus the
// clock's 1µs steps), so lateness is those steps alone.
func TestSummaries(t *testing.T) {
	cfg := Config{TTFT: 10 * time.Millisecond, TPOT: 2 * time.Millisecond}
	tests := []struct {
		name, path, body, prompt string
	}{
		{"chat", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"[00000000000000aa] tell me a long story please, with many words in it"}],"stream":true,"max_tokens":4}`,
			"[00000000000000aa] tell me a long story "},
		{"completions", "/v1/completions", `{"model":"m","prompt":"[00000000000000bb] hi","stream":true,"max_tokens":4}`, "[00000000000000bb] hi"},
		{"ollama", "/api/generate", `{"model":"m","prompt":"[00000000000000cc] hi","options":{"num_predict":4}}`, "[00000000000000cc] hi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := serve(t, cfg, http.MethodPost, tt.path, tt.body, nil)
			sums := s.Summaries(true)
			if len(sums) != 1 {
				t.Fatalf("%d summaries, want 1", len(sums))
			}
			got := sums[0]
			if got.Prompt != tt.prompt || got.Tokens != 4 || got.Chunks != 4 || !got.Complete || got.Status != 200 {
				t.Errorf("summary %+v", got)
			}
			// TTFT is from receipt: a few 1µs clock steps before admission, then 10ms.
			if got.TTFT < cfg.TTFT || got.TTFT > cfg.TTFT+20*time.Microsecond {
				t.Errorf("TTFT %v, want 10ms plus a few µs", got.TTFT)
			}
			if d := got.TPOT - cfg.TPOT; d < 0 || d > 5*time.Microsecond {
				t.Errorf("TPOT %v, want 2ms plus clock steps", got.TPOT)
			}
			if got.LateP50 < 0 || got.LateMax < got.LateP50 || got.LateMax > 10*time.Microsecond {
				t.Errorf("lateness p50 %v max %v", got.LateP50, got.LateMax)
			}
			if got.FirstWritten.Sub(got.Received) != got.TTFT {
				t.Errorf("first written − received = %v, TTFT %v", got.FirstWritten.Sub(got.Received), got.TTFT)
			}
			if again := s.Summaries(false); len(again) != 0 {
				t.Errorf("reset kept %d summaries", len(again))
			}
		})
	}
}

// TestTruthEndpoint reads the summaries over HTTP, as a parent process does.
func TestTruthEndpoint(t *testing.T) {
	cfg := Config{RecordTruth: true, OutputTokens: 3}
	cfg.clock = fixedClock()
	s := New(cfg)
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"[1] x"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	// The chunked terminator follows the handler's return, so reading to EOF means
	// the truth is recorded.
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ctx := context.Background()
	sums, err := FetchSummaries(ctx, srv.Client(), srv.URL, true)
	if err != nil || len(sums) != 1 || sums[0].Prompt != "[1] x" || sums[0].Tokens != 3 {
		t.Fatalf("summaries %+v, %v", sums, err)
	}
	if sums, err := FetchSummaries(ctx, srv.Client(), srv.URL, false); err != nil || len(sums) != 0 {
		t.Fatalf("after reset: %+v, %v", sums, err)
	}

	off := httptest.NewServer(New(Config{}))
	defer off.Close()
	if _, err := FetchSummaries(ctx, off.Client(), off.URL, false); err == nil {
		t.Fatal("a server without truth recording answered")
	}
}

// TestEndDelayHoldsTheStreamsEnd: with EndDelay the usage chunk and [DONE] are written
// that long after the last content chunk, and Truth.Ended records when; the content is
// unchanged.
func TestEndDelayHoldsTheStreamsEnd(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"[1] x"}],"stream":true,"max_tokens":3,"stream_options":{"include_usage":true}}`
	plain, s0 := serve(t, Config{}, http.MethodPost, "/v1/chat/completions", body, nil)
	delayed, s := serve(t, Config{EndDelay: 50 * time.Millisecond}, http.MethodPost, "/v1/chat/completions", body, nil)
	if strings.Count(delayed, "data: ") != strings.Count(plain, "data: ") || !strings.HasSuffix(delayed, "data: [DONE]\n\n") {
		t.Fatalf("stream with EndDelay:\n%s\nwithout:\n%s", delayed, plain)
	}
	for _, c := range []struct {
		s    *Server
		want time.Duration
	}{{s0, 0}, {s, 50 * time.Millisecond}} {
		tr, ok := c.s.Truth("req-1")
		if !ok || !tr.Complete {
			t.Fatalf("truth %+v", tr)
		}
		// The fake clock steps 1µs a reading.
		if gap := tr.Ended.Sub(tr.Chunks[len(tr.Chunks)-1].Written); gap < c.want || gap > c.want+10*time.Microsecond {
			t.Errorf("EndDelay %v: the end was written %v after the last content chunk", c.want, gap)
		}
	}
}
