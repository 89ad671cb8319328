package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/planrun/planrun/internal/version"
)

// Server is the mock. It is an http.Handler; Start serves it on an address.
type Server struct {
	cfg   Config
	mux   *http.ServeMux
	slots chan struct{} // nil when QueueSlots is 0

	requests atomic.Uint64 // generation requests, numbers them
	running  atomic.Int64
	waiting  atomic.Int64
	// queued sums the admitted requests' waits for a slot, in ns, and counts them:
	// vLLM's request_queue_time_seconds.
	queuedNs, queuedN atomic.Int64
	promptTok         atomic.Int64
	outTok            atomic.Int64

	prefixes prefixCache

	truthMu sync.Mutex
	truths  []*Truth

	bufs sync.Pool // *[]byte per stream, so chunk rendering allocates nothing

	held []byte // Config.HoldBytes, every page touched
}

// Version is what /version and /api/version report unless Config.Version says otherwise.
func Version() string { return "mock-" + version.Version }

// New builds a server; cfg should have passed Validate.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg.withDefaults(), mux: http.NewServeMux()}
	if _, ok := s.cfg.clock.(realClock); ok {
		s.cfg.clock = realClock{w: newWaker()}
	}
	if s.cfg.QueueSlots > 0 {
		s.slots = make(chan struct{}, s.cfg.QueueSlots)
	}
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	if n := s.cfg.HoldBytes; n > 0 {
		s.held = make([]byte, n)
		for i := 0; i < len(s.held); i += 4096 {
			s.held[i] = 1 // resident, not just reserved
		}
	}

	for _, r := range s.routes() {
		s.mux.HandleFunc(r.pattern, r.handler)
	}
	return s
}

type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes are the endpoints the mock serves: the OpenAI-compatible ones under /v1, the
// Ollama ones under /api, and its own.
func (s *Server) routes() []route {
	return []route{
		{"POST /v1/chat/completions", s.openaiHandler(openaiChat)},
		{"POST /v1/completions", s.openaiHandler(openaiText)},
		{"POST /v1/responses", s.responsesHandler()},
		{"POST /v1/messages", s.messagesHandler()},
		{"POST /v1/embeddings", s.embeddingsHandler(false)},
		{"GET /v1/models", s.openaiModels},
		{"GET /metrics", s.metrics},
		{"POST /api/chat", s.ollamaHandler(ollamaChat)},
		{"POST /api/generate", s.ollamaHandler(ollamaGenerate)},
		{"POST /api/embed", s.embeddingsHandler(true)},
		{"GET /api/tags", s.ollamaTags},
		{"GET /api/ps", s.ollamaPS},
		{"POST /api/show", s.ollamaShow},
		{"GET /api/version", s.versionHandler},
		{"GET /version", s.versionHandler},
		{"GET /health", func(w http.ResponseWriter, r *http.Request) {}},
		{"POST /reset_prefix_cache", s.resetPrefixCache},
		{"GET /mock/truth", s.truthHandler},
		{"GET /{$}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Ollama is running")) }},
	}
}

// Endpoints are the paths the mock serves under prefix ("/v1", "/api"), in the order
// mock-server -h lists them.
func Endpoints(prefix string) []string {
	var out []string
	for _, r := range (&Server{}).routes() {
		_, path, _ := strings.Cut(r.pattern, " ")
		if strings.HasPrefix(path, prefix+"/") {
			out = append(out, path)
		}
	}
	return out
}

// ServeHTTP routes to the OpenAI-compatible and Ollama endpoints. Once the handler
// returns, the connection's next bytes are the next request's (rxConn.ended).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rc := rxOf(r); rc != nil {
		defer rc.ended()
	}
	s.mux.ServeHTTP(w, r)
}

// Start serves on addr (e.g. "127.0.0.1:0") and returns the base URL. stop closes the
// listener and every open stream.
func (s *Server) Start(addr string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	return "http://" + ln.Addr().String(), s.Serve(ln), nil
}

// Serve serves on ln (a Unix socket, say, where loopback TCP's per-segment cost would
// make the mock the limit of a load benchmark) until stop. On Linux TCP each request's
// arrival is the kernel's receive stamp of its first bytes (Truth.Arrived).
func (s *Server) Serve(ln net.Listener) (stop func()) {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ConnContext: withConn}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(newStampListener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed; stop still returns cleanly
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if hs.Shutdown(ctx) != nil {
				hs.Close() // streams outlive the grace period: cut them
			}
			<-done
		})
	}
	return stop
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	Requests     uint64 // generation requests received
	Running      int64  // holding a queue slot
	Waiting      int64  // waiting for one
	PromptTokens int64
	OutputTokens int64 // tokens written in content chunks
}

// Stats returns the counters now.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(), Running: s.running.Load(), Waiting: s.waiting.Load(),
		PromptTokens: s.promptTok.Load(), OutputTokens: s.outTok.Load(),
	}
}

func (s *Server) versionHandler(w http.ResponseWriter, r *http.Request) {
	v := s.cfg.Version
	if v == "" {
		v = Version()
	}
	writeJSON(w, http.StatusOK, map[string]string{"version": v})
}

// modelKnown reports whether the model is served (any name when Models is empty).
func (s *Server) modelKnown(m string) bool {
	if len(s.cfg.Models) == 0 {
		return true
	}
	for _, x := range s.cfg.Models {
		if x == m {
			return true
		}
	}
	return false
}

// modelNames is what the listing endpoints show.
func (s *Server) modelNames() []string {
	if len(s.cfg.Models) == 0 {
		return []string{"mock"}
	}
	return s.cfg.Models
}

// admit waits for a queue slot; release must be called once decoding ends. ok is false
// when the client left while waiting.
func (s *Server) admit(ctx context.Context) (release func(), ok bool) {
	if s.slots != nil {
		s.waiting.Add(1)
		t0 := s.cfg.clock.Now()
		select {
		case s.slots <- struct{}{}:
			s.waiting.Add(-1)
			s.queuedNs.Add(int64(s.cfg.clock.Now().Sub(t0)))
			s.queuedN.Add(1)
		case <-ctx.Done():
			s.waiting.Add(-1)
			return nil, false
		}
	}
	s.running.Add(1)
	return func() {
		s.running.Add(-1)
		if s.slots != nil {
			<-s.slots
		}
	}, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
