package apply

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
)

// noteRecorder keeps apply's notes, to check what a person would read.
type noteRecorder struct {
	mu    sync.Mutex
	notes []string
}

func (n *noteRecorder) Note(format string, args ...any) {
	n.mu.Lock()
	n.notes = append(n.notes, fmt.Sprintf(format, args...))
	n.mu.Unlock()
}
func (n *noteRecorder) StartLevel(*plan.Cell, plan.LoadLevel, int)         {}
func (n *noteRecorder) Request(*plan.Cell, plan.LoadLevel, executor.Event) {}
func (n *noteRecorder) EndLevel(*plan.Cell, ledger.Row)                    {}
func (n *noteRecorder) text() string                                       { return strings.Join(n.notes, "\n") }

// cellBackend is the adapter apply would measure the cell with.
func cellBackend(t *testing.T, cell *plan.Cell) backends.Backend {
	t.Helper()
	b, err := connect.New(cell.Backend.Config())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func modelCell(url, model, mode string, srv *plan.Server) *plan.Cell {
	return &plan.Cell{ID: "m/" + model + "/-/ollama.t/-/w", ModelID: model, Server: srv,
		Backend: &plan.Backend{Kind: "ollama", Name: "t", Addr: "ollama.t", URL: url, EnsureModel: mode}}
}

// A pull stream as Ollama v0.6.5 sends it, one layer in four progress lines.
const pullStream = `{"status":"pulling manifest"}
{"status":"pulling 0123456789abcdef","digest":"sha256:0123456789abcdef","total":1000,"completed":0}
{"status":"pulling 0123456789abcdef","digest":"sha256:0123456789abcdef","total":1000,"completed":300}
{"status":"pulling 0123456789abcdef","digest":"sha256:0123456789abcdef","total":1000,"completed":1000}
{"status":"verifying sha256 digest"}
{"status":"writing manifest"}
{"status":"success"}
`

// fakeOllama serves /api/show, /api/tags and /api/pull for one model that is absent
// until pulled; pull answers with the given body.
func fakeOllama(t *testing.T, model, pullBody string) (*httptest.Server, *[]string) {
	var (
		mu     sync.Mutex
		pulled bool
		seen   []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		switch r.URL.Path {
		case "/api/show":
			if !pulled || !strings.Contains(string(body), `"`+model+`"`) {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"error":"model '%s' not found"}`, model)
				return
			}
			io.WriteString(w, `{"details":{"format":"gguf","family":"llama","parameter_size":"7.6B","quantization_level":"Q4_K_M"}}`)
		case "/api/tags":
			if pulled {
				fmt.Fprintf(w, `{"models":[{"name":"other:latest","digest":"00"},{"name":"%s","model":"%s","digest":"845dbda0ea48ed749caafd9e6037047aa19acfcfd82e704d7ca97d631a0b697e"}]}`, model, model)
				return
			}
			io.WriteString(w, `{"models":[]}`)
		case "/api/pull":
			if !strings.Contains(string(body), `"stream":true`) {
				t.Errorf("pull request %s does not ask for a stream", body)
			}
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, pullBody)
			pulled = strings.Contains(pullBody, `"success"`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestEnsureModelMissing(t *testing.T) {
	const model = "qwen2.5:7b"
	tests := []struct {
		name     string
		mode     string
		server   *plan.Server
		pull     string
		wantErr  []string // substrings of the error; nil means success
		wantSeen string
	}{
		{name: "check fails with the commands", mode: plan.EnsureModelCheck,
			wantErr:  []string{`model "qwen2.5:7b" is not on the Ollama server`, "`ollama pull qwen2.5:7b`", "`ollama create qwen2.5:7b -f Modelfile`", `ensure_model = "pull" on backend ollama.t`},
			wantSeen: "POST /api/show"},
		{name: "check names the plan's server", mode: plan.EnsureModelCheck, server: &plan.Server{Spec: servers.Spec{Name: "ollama"}},
			wantErr:  []string{`server "ollama"'s setup`},
			wantSeen: "POST /api/show"},
		{name: "off sends nothing", mode: plan.EnsureModelOff, wantSeen: ""},
		{name: "pull then measure", mode: plan.EnsureModelPull, pull: pullStream,
			wantSeen: "POST /api/show,POST /api/pull,POST /api/show,GET /api/tags"},
		{name: "pull error line", mode: plan.EnsureModelPull, pull: "{\"status\":\"pulling manifest\"}\n{\"error\":\"pull model manifest: file does not exist\"}\n",
			wantErr:  []string{`pulling model "qwen2.5:7b"`, "pull model manifest: file does not exist"},
			wantSeen: "POST /api/show,POST /api/pull"},
		{name: "pull cut off", mode: plan.EnsureModelPull, pull: strings.Join(strings.Split(pullStream, "\n")[:3], "\n"),
			wantErr:  []string{`ended before "success"`, `last status "pulling 0123456789abcdef"`},
			wantSeen: "POST /api/show,POST /api/pull"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := fakeOllama(t, model, tt.pull)
			rec := &noteRecorder{}
			a := &applier{o: Options{Progress: rec}, rec: &runRecord{note: rec.Note}}
			cell := modelCell(srv.URL, model, tt.mode, tt.server)
			err := a.ensureModel(context.Background(), cell, cellBackend(t, cell))
			if got := strings.Join(*seen, ","); got != tt.wantSeen {
				t.Errorf("requests %q, want %q", got, tt.wantSeen)
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; notes:\n%s", rec.text())
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if len(a.rec.manifest.Models) != 0 {
					t.Errorf("a failed check recorded models %v", a.rec.manifest.Models)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.mode == plan.EnsureModelOff {
				if a.rec.manifest.Models != nil || a.modelNote(cell) != "" {
					t.Errorf("off recorded %v", a.rec.manifest.Models)
				}
				return
			}
			want := ledger.ModelInfo{Name: "qwen2.5:7b", Digest: "845dbda0ea48ed749caafd9e6037047aa19acfcfd82e704d7ca97d631a0b697e",
				ParameterSize: "7.6B", QuantizationLevel: "Q4_K_M", Family: "llama", Format: "gguf"}
			if got := a.rec.manifest.Models["ollama.t qwen2.5:7b"]; got != want {
				t.Errorf("manifest model %+v, want %+v", got, want)
			}
			if got := a.rec.manifest.ModelDigests["ollama.t qwen2.5:7b"]; got != want.Digest {
				t.Errorf("manifest digest %q", got)
			}
			if got, w := a.modelNote(cell), "model qwen2.5:7b sha256:845dbda0ea48, 7.6B params, Q4_K_M, llama"; got != w {
				t.Errorf("row note %q, want %q", got, w)
			}
			// One note per quarter of the layer, not one per progress line.
			notes := rec.text()
			for _, w := range []string{"pulling manifest", "0% of 0.0 MB", "25% of 0.0 MB", "100% of 0.0 MB", "verifying sha256 digest", "success"} {
				if !strings.Contains(notes, w) {
					t.Errorf("notes lack %q:\n%s", w, notes)
				}
			}
		})
	}
}

// Against the pinned Ollama: the tiny model's details and digest come from the server,
// and a model it lacks fails the check with the command that gets it.
func TestEnsureModelRealOllama(t *testing.T) {
	s := ollamatest.Start(t)
	nr := &noteRecorder{}
	a := &applier{o: Options{Progress: nr}, rec: &runRecord{note: nr.Note}}
	cell := modelCell(s.URL, s.Model, plan.EnsureModelCheck, nil)
	if err := a.ensureModel(context.Background(), cell, cellBackend(t, cell)); err != nil {
		t.Fatal(err)
	}
	got := a.rec.manifest.Models["ollama.t "+s.Model]
	if digest := s.Digest(t, s.Model+":latest"); got.Digest != digest || got.Name != s.Model+":latest" {
		t.Errorf("model %+v, want name tiny:latest and digest %q from /api/tags", got, digest)
	}
	if got.ParameterSize == "" || got.QuantizationLevel == "" || got.Family != "llama" || got.Format != "gguf" {
		t.Errorf("model details %+v: want parameter size, quantization level, family llama, format gguf", got)
	}
	t.Logf("tiny: %s", got)

	absent := modelCell(s.URL, "absent", plan.EnsureModelCheck, nil)
	err := a.ensureModel(context.Background(), absent, cellBackend(t, absent))
	if err == nil || !strings.Contains(err.Error(), "`ollama pull absent`") {
		t.Errorf("missing model: %v", err)
	}
}
