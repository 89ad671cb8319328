package ollama

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
)

// BenchmarkChunkPath measures the per-chunk path of the NDJSON adapter (line framing,
// JSON fields, clock read, arrival stamp) through the whole core, one Ollama /api/chat
// line per body read, with the real clock. The per-request cost (request body, the done
// line's timings) is spread over chunksPerRequest chunks.
//
//	go test -run '^$' -bench ChunkPath -benchmem -benchtime=200x ./backends/ollama/
func BenchmarkChunkPath(b *testing.B) {
	const chunksPerRequest = 1000
	var parts [][]byte
	for i := 0; i < chunksPerRequest; i++ {
		parts = append(parts, fmt.Appendf(nil, `{"model":"qwen2.5:7b","created_at":"2025-01-02T03:04:05.%06dZ","message":{"role":"assistant","content":" tok%d"},"done":false}`+"\n", i, i%10))
	}
	parts = append(parts, []byte(`{"model":"qwen2.5:7b","created_at":"2025-01-02T03:04:06Z","message":{"role":"assistant","content":""},"done_reason":"length","done":true,"total_duration":81234567,"load_duration":12345678,"prompt_eval_count":7,"prompt_eval_duration":2345678,"eval_count":1000,"eval_duration":61234567}`+"\n"))
	replay := &backendtest.Replay{Segments: backendtest.Timed(parts, 0, 0)}
	be := mustNew(b, backends.Config{URL: "http://bench.test"}, backends.WithHTTPClient(&http.Client{Transport: replay}))
	req := backends.Request{Model: "m", Prompt: "p", MaxTokens: chunksPerRequest}
	backendtest.BenchChunkPath(b, be, req, chunksPerRequest, func(s backends.Sample) bool {
		return s.Err == nil && s.Chunks == chunksPerRequest && s.OutputTokens == chunksPerRequest
	})
}
