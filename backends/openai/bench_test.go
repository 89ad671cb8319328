package openai

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
)

// BenchmarkChunkPath measures the per-chunk path (SSE framing, JSON fields, clock read,
// arrival stamp) through the whole core, one vLLM-format event per body read, with the
// real clock. The per-request cost is spread over chunksPerRequest chunks.
//
//	go test -run '^$' -bench ChunkPath -benchmem ./backends/openai/
func BenchmarkChunkPath(b *testing.B) {
	const chunksPerRequest = 1000
	var parts [][]byte
	h := `"id":"chatcmpl-8d3a","object":"chat.completion.chunk","created":1735787045,"model":"Qwen/Qwen2.5-7B-Instruct"`
	parts = append(parts, fmt.Appendf(nil, `data: {%s,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n", h))
	for i := 0; i < chunksPerRequest; i++ {
		parts = append(parts, fmt.Appendf(nil, `data: {%s,"choices":[{"index":0,"delta":{"content":" tok%d"},"logprobs":null,"finish_reason":null}]}`+"\n\n", h, i%10))
	}
	parts = append(parts, fmt.Appendf(nil, `data: {%s,"choices":[],"usage":{"prompt_tokens":12,"total_tokens":1012,"completion_tokens":1000}}`+"\n\n", h))
	parts = append(parts, []byte("data: [DONE]\n\n"))
	replay := &backendtest.Replay{Segments: backendtest.Timed(parts, 0, 0)}
	be := mustNew(b, backends.Config{URL: "http://bench.test/v1"}, backends.WithHTTPClient(&http.Client{Transport: replay}))
	req := backends.Request{Model: "m", Prompt: "p", MaxTokens: chunksPerRequest}
	backendtest.BenchChunkPath(b, be, req, chunksPerRequest, func(s backends.Sample) bool {
		return s.Err == nil && s.Chunks == chunksPerRequest
	})
}
