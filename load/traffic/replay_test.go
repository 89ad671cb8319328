package traffic

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// traceRows is a Mooncake trace with a row every gap ms of trace time, row i asking for
// 100+10·(i%7) prompt and 1+i%5 output tokens.
func traceRows(n int, gap time.Duration) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%d]}\n",
			(time.Duration(i) * gap).Milliseconds(), 100+10*(i%7), 1+i%5, i)
	}
	return b.String()
}

func replayWorkload(t *testing.T, data string, r plan.Replay, concurrency, requests int) *plan.Workload {
	w := fixed(concurrency)
	w.Requests, w.Replay = requests, &r
	w.Dataset = &plan.Dataset{Name: "trace", Spec: dataset.Spec{Path: writeFile(t, "trace.jsonl", data), Format: dataset.FormatMooncake}}
	w.PromptLength, w.OutputLength = dataset.Length{Kind: dataset.LengthDataset}, dataset.Length{Kind: dataset.LengthDataset}
	return w
}

// The window a replay sends: which rows, the note where it is cut, the bounding rows
// the fit and the context check see, and how many connections its level warms: the
// rows due within 2 s of replay time (warmWindow), at most the level's concurrency.
func TestReplayWindow(t *testing.T) {
	data := traceRows(40, 100*time.Millisecond) // 0 to 3.9 s of trace time
	for _, tc := range []struct {
		name        string
		replay      plan.Replay
		concurrency int
		requests    int
		rows        int
		note        string
		warm        int
	}{
		{"whole trace", plan.Replay{Speedup: 1}, 0, 0, 40, "", 20},
		{"window", plan.Replay{Speedup: 1, Start: time.Second, Duration: 2 * time.Second}, 0, 0, 20, "trace cut at 3s: 20 of 30 rows replayed", 20},
		{"requests cap it", plan.Replay{Speedup: 2}, 0, 25, 25, "trace cut at 2.5s: 25 of 40 rows replayed", 25},
		{"concurrency caps the warm connections", plan.Replay{Speedup: 1}, 8, 0, 40, "", 8},
		{"a speedup packs more rows into the warm window", plan.Replay{Speedup: 4}, 0, 0, 40, "", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Read(replayWorkload(t, data, tc.replay, tc.concurrency, tc.requests))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Sample.Note != tc.note || len(tr.Sample.Rows) != 0 || tr.Sample.Info.Rows != 40 {
				t.Errorf("sample: note %q, %d rows held, info %+v; want note %q, no rows, 40 rows counted", tr.Sample.Note,
					len(tr.Sample.Rows), tr.Sample.Info, tc.note)
			}
			lv := tr.Level(plan.LoadLevel{Concurrency: tc.concurrency})
			if lv.Trace == nil || lv.Requests != tc.rows || lv.WarmConnections != tc.warm {
				t.Errorf("level: trace %v, %d requests, %d warm connections; want %d and %d", lv.Trace != nil, lv.Requests,
					lv.WarmConnections, tc.rows, tc.warm)
			}
			b := tr.Shapes()
			if len(b) != 3 || b[0].PromptTokens != 100 || b[1].PromptTokens != 160 || b[2].PromptTokens+b[2].MaxTokens < 160+1 {
				t.Errorf("bounds %+v, want the shortest (100), the longest prompt (160) and the longest request", b)
			}
		})
	}
}

// The trace streams each row of the window at (timestamp − start) / speedup, with its
// own lengths and blocks, and stops at the window's end.
func TestReplayTraceRows(t *testing.T) {
	w := replayWorkload(t, traceRows(10, 200*time.Millisecond), plan.Replay{Speedup: 2, Start: 400 * time.Millisecond, Duration: time.Second}, 0, 0)
	tr, err := Read(w)
	if err != nil {
		t.Fatal(err)
	}
	rows := make(chan executor.TraceRow, 100)
	if err := tr.Level(plan.LoadLevel{}).Trace(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	close(rows)
	i := 2 // the first row at or after 400 ms
	for r := range rows {
		want := executor.Shape{PromptTokens: 100 + 10*(i%7), MaxTokens: 1 + i%5}
		if at := time.Duration(i-2) * 100 * time.Millisecond; r.At != at || r.Shape.PromptTokens != want.PromptTokens ||
			r.Shape.MaxTokens != want.MaxTokens || len(r.Shape.HashIDs) != 1 || r.Shape.HashIDs[0] != int64(i) {
			t.Fatalf("row %d: %+v, want at %v with %+v and block %d", i, r, at, want, i)
		}
		i++
	}
	if i != 7 {
		t.Fatalf("%d rows streamed, want the 5 rows of [400 ms, 1.4 s)", i-2)
	}
}

func TestReplayRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		start      time.Duration
		want       string
	}{
		{"window past the end", traceRows(5, 100*time.Millisecond), time.Minute,
			"the replay window (start 1m0s, duration to the end) holds none of the trace's rows, which span 0s to 400ms"},
		{"out of order", "{\"timestamp\": 5, \"input_length\": 9, \"output_length\": 2, \"hash_ids\": []}\n" +
			"{\"timestamp\": 4, \"input_length\": 9, \"output_length\": 2, \"hash_ids\": []}\n", 0, "trace.jsonl:2: timestamp 4 is before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(replayWorkload(t, tc.data, plan.Replay{Speedup: 1, Start: tc.start}, 0, 0))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), `dataset "trace": `) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
