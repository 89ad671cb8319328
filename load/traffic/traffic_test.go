package traffic

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

func ptr[T any](v T) *T { return &v }

// fixed is a workload of fixed lengths at the given levels, as the plan's defaults leave it.
func fixed(concurrency ...int) *plan.Workload {
	return &plan.Workload{Name: "w", PromptTokens: 100, MaxTokens: 8, PromptLength: dataset.Fixed(100),
		OutputLength: dataset.Fixed(8), Concurrency: concurrency, WarmupRuns: 1, RepeatRuns: 2, Stream: true}
}

// writeFile writes a dataset file into a fresh directory and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLevel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		w     func() *plan.Workload
		level plan.LoadLevel
		want  executor.LevelSpec
	}{
		{"closed loop, a request per slot", func() *plan.Workload { return fixed(4) }, plan.LoadLevel{Concurrency: 4},
			executor.LevelSpec{Concurrency: 4, Requests: 4, WarmupRuns: 1, RepeatRuns: 2}},
		{"closed loop, requests set", func() *plan.Workload { w := fixed(4); w.Requests = 30; return w }, plan.LoadLevel{Concurrency: 4},
			executor.LevelSpec{Concurrency: 4, Requests: 30, WarmupRuns: 1, RepeatRuns: 2}},
		{"open loop, seeded", func() *plan.Workload {
			w := fixed(2)
			w.Requests, w.Arrival, w.Seed, w.RequestRates = 10, "constant", ptr(int64(9)), []float64{3}
			return w
		}, plan.LoadLevel{Concurrency: 2, RequestRate: 3},
			// Connections opened ahead: the schedule's peak need, capped at the concurrency.
			executor.LevelSpec{Concurrency: 2, Requests: 10, WarmupRuns: 1, RepeatRuns: 2, RequestRate: 3, Arrival: "constant", Seed: 9,
				WarmConnections: 2}},
		{"open loop, no cap: warms its peak need", func() *plan.Workload {
			w := fixed(0)
			w.Requests, w.Arrival, w.Seed, w.RequestRates = 10, "constant", ptr(int64(9)), []float64{4}
			return w
		}, plan.LoadLevel{RequestRate: 4},
			// Due every 250 ms: 8 fall within any 2 s.
			executor.LevelSpec{Requests: 10, WarmupRuns: 1, RepeatRuns: 2, RequestRate: 4, Arrival: "constant", Seed: 9,
				WarmConnections: 8}},
		{"sessions: sessions × turns", func() *plan.Workload {
			w := fixed(3)
			w.Session = &plan.Session{Turns: 4, ThinkTime: time.Second}
			return w
		}, plan.LoadLevel{Concurrency: 3},
			executor.LevelSpec{Concurrency: 3, Requests: 12, WarmupRuns: 1, RepeatRuns: 2,
				Session: &executor.SessionSpec{Turns: 4, ThinkTime: time.Second, Sessions: 3}}},
		{"sessions set", func() *plan.Workload {
			w := fixed(3)
			w.Session = &plan.Session{Turns: 2, Sessions: 5}
			return w
		}, plan.LoadLevel{Concurrency: 3},
			executor.LevelSpec{Concurrency: 3, Requests: 10, WarmupRuns: 1, RepeatRuns: 2,
				Session: &executor.SessionSpec{Turns: 2, Sessions: 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Read(tc.w())
			if err != nil {
				t.Fatal(err)
			}
			got := tr.Level(tc.level)
			if got.Trace != nil || got.Concurrency != tc.want.Concurrency || got.Requests != tc.want.Requests ||
				got.WarmupRuns != tc.want.WarmupRuns || got.RepeatRuns != tc.want.RepeatRuns || got.RequestRate != tc.want.RequestRate ||
				got.Arrival != tc.want.Arrival || got.Seed != tc.want.Seed || got.WarmConnections != tc.want.WarmConnections {
				t.Errorf("level = %+v, want %+v", got, tc.want)
			}
			if (got.Session == nil) != (tc.want.Session == nil) || got.Session != nil && *got.Session != *tc.want.Session {
				t.Errorf("session = %+v, want %+v", got.Session, tc.want.Session)
			}
		})
	}
}

func TestRequestAndPrompts(t *testing.T) {
	w := fixed(1)
	w.Temperature, w.Seed, w.ForceMaxTokens, w.Stream, w.SharedPrefix = ptr(0.5), ptr(int64(3)), true, false, true
	tr, err := Read(w)
	if err != nil {
		t.Fatal(err)
	}
	req := tr.Request("m1")
	if req.Model != "m1" || req.MaxTokens != 8 || !req.ForceMaxTokens || *req.Temperature != 0.5 || *req.Seed != 3 || !req.NoStream {
		t.Errorf("request = %+v", req)
	}
	p := tr.Prompts("cell-a")
	if p.Salt != "cell-a" || !p.Shared || p.Text != "" || p.Corpus != nil || p.BlockSize != 0 {
		t.Errorf("prompts = %+v", p)
	}
	if sh := tr.Shapes(); sh != nil {
		t.Errorf("fixed lengths drew shapes %+v: every request is the template", sh)
	}
}

// A text dataset's rows become the corpus prompts are cut from, as many rows as one run
// sends; a Mooncake dataset's block size reaches the prompts.
func TestPromptsOfDatasets(t *testing.T) {
	text := writeFile(t, "book.txt", "one two three\n\nfour five\n\nsix\n")
	w := fixed(2)
	w.Dataset = &plan.Dataset{Name: "book", Spec: dataset.Spec{Path: text, Format: dataset.FormatText, TextWords: 2}}
	w.PromptLength = dataset.Length{Kind: dataset.LengthUniform, Min: 2, Max: 9}
	tr, err := Read(w)
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Prompts("s").Corpus; len(c) == 0 || len(tr.Sample.Rows) != 2 {
		t.Errorf("corpus %q from %d rows, want the 2 drawn rows' words", c, len(tr.Sample.Rows))
	}
	trace := writeFile(t, "trace.jsonl", "{\"timestamp\": 0, \"input_length\": 40, \"output_length\": 3, \"hash_ids\": [1]}\n")
	w = fixed(1)
	w.Dataset = &plan.Dataset{Name: "trace", Spec: dataset.Spec{Path: trace, Format: dataset.FormatMooncake}, BlockSize: 16}
	if tr, err = Read(w); err != nil {
		t.Fatal(err)
	}
	if p := tr.Prompts("s"); p.BlockSize != 16 || p.Corpus != nil {
		t.Errorf("prompts = %+v, want block size 16 and no corpus", p)
	}
}

func TestReadRefusesMalformedDataset(t *testing.T) {
	w := fixed(1)
	w.Dataset = &plan.Dataset{Name: "rows", Spec: dataset.Spec{Path: writeFile(t, "rows.jsonl", "{\"prompt\": \"a b\"}\n{\"prompt\": 3}\n"),
		Format: dataset.FormatJSONL}}
	if _, err := Read(w); err == nil || !strings.Contains(err.Error(), `dataset "rows": `) || !strings.Contains(err.Error(), "rows.jsonl:2:") {
		t.Fatalf("err = %v, want the dataset's name and rows.jsonl:2", err)
	}
}

// Each level and each run of planrun gets markers of its own; the salt (the shared
// texts' seed) and the cell's prompts stay as they are.
func TestLevelPrompts(t *testing.T) {
	base := &executor.Prompts{Salt: "cell", Words: 7}
	seen := map[string]bool{}
	for _, run := range []string{"run1", "run2"} {
		for _, lv := range []plan.LoadLevel{{Concurrency: 1}, {Concurrency: 2}, {Concurrency: 2, RequestRate: 0.5}} {
			p := LevelPrompts(base, run, lv)
			if p.Salt != "cell" || p.Words != 7 || seen[p.Marker] || p.Marker == "" {
				t.Fatalf("%s %v: prompts %+v (markers so far %v)", run, lv, p, seen)
			}
			seen[p.Marker] = true
		}
	}
	if base.Marker != "" {
		t.Errorf("the cell's prompts were changed: marker %q", base.Marker)
	}
}

func TestLongestRequest(t *testing.T) {
	for _, tc := range []struct {
		name            string
		w               func() *plan.Workload
		shapes          []executor.Shape
		wantIn, wantOut int
	}{
		{"fixed lengths", func() *plan.Workload { return fixed(1) }, nil, 100, 8},
		{"the plan's own text counts no tokens", func() *plan.Workload { w := fixed(1); w.Prompt = "hello"; return w }, nil, 0, 8},
		{"the longest shape", func() *plan.Workload { return fixed(1) },
			[]executor.Shape{{PromptTokens: 300, MaxTokens: 5}, {PromptTokens: 50, MaxTokens: 400}, {PromptTokens: 200, MaxTokens: 10}}, 50, 400},
		{"a shape's zero lengths are the workload's", func() *plan.Workload { return fixed(1) },
			[]executor.Shape{{MaxTokens: 30}, {PromptTokens: 120}}, 100, 30},
		{"a dataset row's text counts no tokens", func() *plan.Workload { return fixed(1) },
			[]executor.Shape{{Text: "a row", MaxTokens: 150}}, 0, 150},
		{"a session's last turn carries its history", func() *plan.Workload {
			w := fixed(1)
			w.PromptTokens, w.MaxTokens, w.Session = 1000, 500, &plan.Session{Turns: 3}
			return w
		}, nil, 4000, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if in, out := LongestRequest(tc.w(), tc.shapes); in != tc.wantIn || out != tc.wantOut {
				t.Errorf("longest = %d + %d, want %d + %d", in, out, tc.wantIn, tc.wantOut)
			}
		})
	}
}

func TestFillerRange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shapes []executor.Shape
		lo, hi int
	}{
		{"no shapes", nil, 0, 0},
		{"text and output lengths only", []executor.Shape{{Text: "row"}, {MaxTokens: 9}}, 0, 0},
		{"drawn prompts", []executor.Shape{{PromptTokens: 300}, {PromptTokens: 80}, {PromptTokens: 120}, {Text: "x", PromptTokens: 5}}, 80, 300},
		{"a prefix is filler too", []executor.Shape{{PromptTokens: 300, PrefixTokens: 40}, {PromptTokens: 80}}, 40, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if lo, hi := FillerRange(tc.shapes); lo != tc.lo || hi != tc.hi {
				t.Errorf("range = [%d, %d], want [%d, %d]", lo, hi, tc.lo, tc.hi)
			}
		})
	}
}

func TestDrawShapes(t *testing.T) {
	drawn := func(seed int64) []executor.Shape {
		w := fixed(2)
		w.Requests, w.Seed = 50, ptr(seed)
		w.PromptLength = dataset.Length{Kind: dataset.LengthUniform, Min: 10, Max: 500}
		w.OutputLength = dataset.Length{Kind: dataset.LengthUniform, Min: 1, Max: 64}
		return DrawShapes(w, dataset.Sample{})
	}
	a, b, c := drawn(1), drawn(1), drawn(2)
	if len(a) != 50 || !slices.EqualFunc(a, b, sameLengths) || slices.EqualFunc(a, c, sameLengths) {
		t.Fatalf("%d shapes; same seed alike %v, other seed alike %v", len(a), slices.EqualFunc(a, b, sameLengths), slices.EqualFunc(a, c, sameLengths))
	}
	for i, sh := range a {
		if sh.PromptTokens < 10 || sh.PromptTokens > 500 || sh.MaxTokens < 1 || sh.MaxTokens > 64 || sh.Text != "" {
			t.Fatalf("shape %d = %+v, out of the declared bounds", i, sh)
		}
	}

	rows := dataset.Sample{Rows: []dataset.Row{{Prompt: "a b c", PromptWords: 3, OutputWords: 30}, {Prompt: "d e", PromptWords: 2, OutputTokens: 7}}}
	w := fixed(1)
	w.Requests, w.Dataset = 3, &plan.Dataset{}
	w.PromptLength, w.OutputLength = dataset.Length{Kind: dataset.LengthDataset}, dataset.Length{Kind: dataset.LengthDataset}
	got := DrawShapes(w, rows)
	want := []executor.Shape{{Text: "a b c", MaxTokens: 40}, {Text: "d e", Offset: 3, MaxTokens: 7}, {Text: "a b c", Offset: 5, MaxTokens: 40}}
	if !slices.EqualFunc(got, want, func(x, y executor.Shape) bool { return sameLengths(x, y) && x.Text == y.Text && x.Offset == y.Offset }) {
		t.Errorf("dataset shapes = %+v, want %+v (ShareGPT's 30 answer words are 40 tokens; a small dataset wraps)", got, want)
	}
}

func sameLengths(x, y executor.Shape) bool {
	return x.PromptTokens == y.PromptTokens && x.MaxTokens == y.MaxTokens
}
