package ledger

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// The request log's bytes, pinned: the line as planrun wrote it before RequestRecord
// embedded executor.Event (the same fields, in the same order), and the record it
// reads back.
func TestRequestLine(t *testing.T) {
	full := RequestRecord{CellID: "m/tiny/-/ollama.local/-/w", Concurrency: 4, RequestRate: 2.5, RunID: "20261204-0301", Host: "node1",
		Event: executor.Event{Run: 1, Ramp: true, Session: 2, Turn: 3, NewPromptTokens: 5, SharedPrefixTokens: 8,
			Paced: true, Scheduled: 5 * time.Millisecond, SendLag: 2 * time.Microsecond, Index: 7,
			Sample: &backends.Sample{ID: "w/1/7", Start: time.Date(2026, 12, 4, 3, 1, 2, 3000, time.UTC), ResponseID: "chatcmpl-1",
				Connect: 1000, Wrote: 2000, Headers: 3000, FirstByte: 4000, FirstToken: 5000, End: 9000, BodyEnd: 9100,
				ChunkArrivals: []time.Duration{5000, 7000, 9000}, OutputTokens: 3, TokenSource: backends.TokensUsage, PromptTokens: 12,
				Chunks: 3, TextBytes: 11, FinishReason: "length", Slot: 2, Model: "tiny", MaxTokens: 3, Text: "not written",
				Err: &backends.Error{Class: backends.ErrServer, Status: 500, Message: "boom <&>"}}}}
	for _, tc := range []struct {
		name string
		rec  RequestRecord
		want string
	}{
		{"every field", full, `{"cell_id":"m/tiny/-/ollama.local/-/w","run":1,"concurrency":4,"request_rate":2.5,"warmup":false,"ramp":true,"run_id":"20261204-0301","host":"node1","id":"w/1/7","start":"2026-12-04T03:01:02.000003Z","response_id":"chatcmpl-1","connect_ns":1000,"wrote_ns":2000,"headers_ns":3000,"first_byte_ns":4000,"first_token_ns":5000,"end_ns":9000,"body_end_ns":9100,"chunk_arrivals_ns":[5000,7000,9000],"output_tokens":3,"token_source":"usage","prompt_tokens":12,"chunks":3,"text_bytes":11,"finish_reason":"length","slot":2,"model":"tiny","max_tokens":3,"error":{"class":"5xx","status":500,"message":"boom \u003c\u0026\u003e"},"session":2,"turn":3,"new_prompt_tokens":5,"shared_prefix_tokens":8,"scheduled_ns":5000000,"send_lag_ns":2000}` + "\n"},
		{"no sample, closed loop", RequestRecord{CellID: "c"}, `{"cell_id":"c","run":0,"concurrency":0,"warmup":false,"id":"","start":"0001-01-01T00:00:00Z","end_ns":0,"output_tokens":0,"chunks":0,"text_bytes":0}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := NewRequestLog(&buf)
			if err := l.Write(tc.rec); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Errorf("line\n%s\nwant\n%s", buf.String(), tc.want)
			}
			if b, err := json.Marshal(tc.rec); err != nil || string(b)+"\n" != tc.want {
				t.Errorf("json.Marshal = %s, %v; want the log's line", b, err)
			}
		})
	}
	back, err := ReadRequests(bytes.NewReader([]byte(`{"cell_id":"m/tiny/-/ollama.local/-/w","run":1,"concurrency":4,"request_rate":2.5,"warmup":false,"ramp":true,"run_id":"20261204-0301","host":"node1","id":"w/1/7","start":"2026-12-04T03:01:02.000003Z","response_id":"chatcmpl-1","connect_ns":1000,"wrote_ns":2000,"headers_ns":3000,"first_byte_ns":4000,"first_token_ns":5000,"end_ns":9000,"body_end_ns":9100,"chunk_arrivals_ns":[5000,7000,9000],"output_tokens":3,"token_source":"usage","prompt_tokens":12,"chunks":3,"text_bytes":11,"finish_reason":"length","slot":2,"model":"tiny","max_tokens":3,"error":{"class":"5xx","status":500,"message":"boom \u003c\u0026\u003e"},"session":2,"turn":3,"new_prompt_tokens":5,"shared_prefix_tokens":8,"scheduled_ns":5000000,"send_lag_ns":2000}`)))
	if err != nil || len(back) != 1 {
		t.Fatalf("ReadRequests: %d records, %v", len(back), err)
	}
	want := full
	want.Index, want.Sample.Text = 0, "" // not in the line
	if !reflect.DeepEqual(back[0], want) {
		t.Errorf("read back\n%+v\nwant\n%+v", back[0], want)
	}
}
