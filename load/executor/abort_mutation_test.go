package executor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// dyingBackend fails its request with class, closing abort first: a managed server that
// died under the request.
type dyingBackend struct {
	fakeBackend
	class backends.ErrorClass
	abort chan struct{}
	once  sync.Once
}

func (d *dyingBackend) Do(_ context.Context, req backends.Request) backends.Sample {
	d.once.Do(func() { close(d.abort) })
	return backends.Sample{ID: req.ID, Start: time.Now(), Err: &backends.Error{Class: d.class, Message: "lost it"}}
}

// A request that lost its connection as the managed server died records the server's
// death, with what the connection said; a failure the server answered stays what it is.
func TestConnectionLostToADyingServer(t *testing.T) {
	died := &backends.Error{Class: backends.ErrServerDied, Message: "ollama.local exited"}
	for _, c := range []struct {
		class    backends.ErrorClass
		abortErr *backends.Error
		want     string
	}{
		{backends.ErrRefused, died, "server_died: ollama.local exited (lost it)"},
		{backends.ErrStreamCut, died, "server_died: ollama.local exited (lost it)"},
		{backends.ErrOther, nil, "server_died: the server stopped before this request was sent (lost it)"},
		{backends.ErrServer, died, "5xx: lost it"},
		{backends.ErrTimeout, died, "timeout: lost it"},
	} {
		t.Run(string(c.class), func(t *testing.T) {
			b := &dyingBackend{class: c.class, abort: make(chan struct{})}
			res := RunLevel(context.Background(), b, LevelSpec{Concurrency: 1, Requests: 1, RepeatRuns: 1},
				Options{Abort: b.abort, AbortErr: c.abortErr})
			s := res.Runs[0].Samples[0]
			if s.Err == nil || s.Err.Error() != c.want {
				t.Fatalf("error %v, want %q", s.Err, c.want)
			}
			if c.abortErr != nil && c.abortErr.Message != "ollama.local exited" {
				t.Fatalf("the options' AbortErr was changed: %q", c.abortErr.Message)
			}
		})
	}
}

// warmingBackend records the connections it is asked to open.
type warmingBackend struct {
	fakeBackend
	mu    sync.Mutex
	warms []int
}

func (w *warmingBackend) WarmConnections(_ context.Context, n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warms = append(w.warms, n)
	return n
}

// Connections are opened ahead of every run, warm-up included, when the level asks
// for some; never when it asks for none.
func TestWarmConnectionsBeforeEachRun(t *testing.T) {
	for _, n := range []int{0, 3} {
		b := &warmingBackend{}
		RunLevel(context.Background(), b, LevelSpec{Concurrency: 1, Requests: 1, WarmupRuns: 1, RepeatRuns: 2, WarmConnections: n}, Options{})
		want := 3
		if n == 0 {
			want = 0
		}
		if len(b.warms) != want || (want > 0 && b.warms[0] != n) {
			t.Fatalf("WarmConnections %d: asked to open %v, want %d times %d", n, b.warms, want, n)
		}
	}
	b := &warmingBackend{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	RunLevel(ctx, b, LevelSpec{Concurrency: 1, Requests: 1, RepeatRuns: 1, WarmConnections: 2}, Options{})
	if len(b.warms) != 0 {
		t.Fatalf("a stopped run opened connections: %v", b.warms)
	}
}

// maxTokensBackend records each request's output limit by id.
type maxTokensBackend struct {
	fakeBackend
	mu  sync.Mutex
	max map[string]int
}

func (m *maxTokensBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	m.mu.Lock()
	m.max[req.ID] = req.MaxTokens
	m.mu.Unlock()
	return m.fakeBackend.Do(ctx, req)
}

// A shape's own output length replaces the template's; a shape without one keeps it.
func TestShapeOutputLength(t *testing.T) {
	b := &maxTokensBackend{max: map[string]int{}}
	RunLevel(context.Background(), b, LevelSpec{Concurrency: 1, Requests: 2, RepeatRuns: 1,
		Request: backends.Request{MaxTokens: 32}, Prompts: &Prompts{Words: 3},
		Shapes: []Shape{{PromptTokens: 5}, {PromptTokens: 5, MaxTokens: 7}}}, Options{})
	if b.max["run0/req0"] != 32 || b.max["run0/req1"] != 7 {
		t.Fatalf("output limits sent %v, want req0 32 (the template's), req1 7 (its shape's)", b.max)
	}
}
