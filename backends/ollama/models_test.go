package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// The model endpoints apply uses (show, tags, ps, pull): against the real Ollama, with
// the figures read again from the server without the adapter; the pull stream, which
// needs the registry, from a recorded one.

// rawJSON posts (or, with a nil body, gets) path on the real server with plain net/http.
func rawJSON(t *testing.T, url string, body any, v any) {
	t.Helper()
	var resp *http.Response
	var err error
	if body == nil {
		resp, err = http.Get(url)
	} else {
		b, _ := json.Marshal(body)
		resp, err = http.Post(url, "application/json", bytes.NewReader(b))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestRealOllamaShowModel(t *testing.T) {
	s := realOllama(t)
	b := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL})
	got, err := b.ShowModel(context.Background(), s.Model)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Details   map[string]any `json:"details"`
		ModelInfo map[string]any `json:"model_info"`
	}
	rawJSON(t, s.URL+"/api/show", map[string]string{"model": s.Model}, &raw)
	str := func(k string) string { s, _ := raw.Details[k].(string); return s }
	want := backends.ModelDetails{ParameterSize: str("parameter_size"), QuantizationLevel: str("quantization_level"),
		Family: str("family"), Format: str("format"), Info: raw.ModelInfo}
	if got.Format != "gguf" || got.Family == "" || len(got.Info) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("ShowModel = %+v\nthe server says %+v", got, want)
	}

	_, err = b.ShowModel(context.Background(), "no-such-model")
	var e *backends.Error
	if !errors.As(err, &e) || e.Class != backends.ErrNotFound || !strings.HasPrefix(err.Error(), "ollama /api/show no-such-model: 404: ") {
		t.Fatalf("ShowModel of a missing model: %v, want a 404 naming it", err)
	}
}

func TestRealOllamaModelDigest(t *testing.T) {
	s := realOllama(t)
	b := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL})
	listed := s.Digest(t, s.Model+":latest")
	for _, id := range []string{s.Model, s.Model + ":latest"} {
		digest, name, err := b.ModelDigest(context.Background(), id)
		if err != nil || digest != listed || name != s.Model+":latest" {
			t.Fatalf("ModelDigest(%q) = %q, %q, %v; the server lists %s:latest with %q", id, digest, name, err, s.Model, listed)
		}
	}
	// The fresh listing also renews the cached one Probe and Explain read.
	if b.digest(s.Model) != listed {
		t.Fatalf("cached digest %q, want %q", b.digest(s.Model), listed)
	}
	// The shared server may hold other tests' models too (the thinking variant): the
	// message counts what the server lists, read here apart from the adapter.
	resp, err := http.Get(s.URL + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	var tags struct{ Models []json.RawMessage }
	err = json.NewDecoder(resp.Body).Decode(&tags)
	resp.Body.Close()
	if err != nil || len(tags.Models) == 0 {
		t.Fatalf("/api/tags: %d models, %v", len(tags.Models), err)
	}
	_, _, err = b.ModelDigest(context.Background(), "no-such-model")
	if want := fmt.Sprintf(`"no-such-model" is not in the server's list of %d models`, len(tags.Models)); err == nil || err.Error() != want {
		t.Fatalf("ModelDigest of a missing model: %v, want %q", err, want)
	}
	down := mustNew(t, backends.Config{Name: "ollama.down", URL: "http://127.0.0.1:1"})
	if _, _, err := down.ModelDigest(context.Background(), s.Model); err == nil {
		t.Fatal("ModelDigest on no server succeeded")
	}
}

func TestRealOllamaLoadedModels(t *testing.T) {
	s := realOllama(t)
	b := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL})
	if got := b.Do(context.Background(), backends.Request{ID: "ps", Model: s.Model, Prompt: "hi", MaxTokens: 2}); !got.OK() {
		t.Fatal(got.Err)
	}
	got, err := b.LoadedModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Models []struct {
			Name          string `json:"name"`
			Size          int64  `json:"size"`
			SizeVRAM      int64  `json:"size_vram"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	rawJSON(t, s.URL+"/api/ps", nil, &raw)
	var want []backends.LoadedModel
	for _, m := range raw.Models {
		want = append(want, backends.LoadedModel{Name: m.Name, SizeBytes: m.Size, SizeVRAMBytes: m.SizeVRAM, ContextLength: m.ContextLength})
	}
	// The server orders them by expiry, which the request above may have just moved.
	slices.SortFunc(want, func(a, b backends.LoadedModel) int { return strings.Compare(a.Name, b.Name) })
	if len(got) == 0 || got[0].SizeBytes <= 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadedModels = %+v, the server says %+v", got, want)
	}
	down := mustNew(t, backends.Config{Name: "ollama.down", URL: "http://127.0.0.1:1"})
	if _, err := down.LoadedModels(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "ollama /api/ps: refused: ") {
		t.Fatalf("LoadedModels on no server: %v", err)
	}
}

// A pull's progress: each new status once, each layer in quarters, success only on the
// server's "success".
func TestPullModel(t *testing.T) {
	const layer = "sha256:0123456789abcdef0123"
	for _, c := range []struct {
		name     string
		status   int
		stream   string
		progress []string
		err      string
	}{
		{"success", 200, `{"status":"pulling manifest"}
{"status":"pulling manifest"}

{"status":"pulling 0123456789ab","digest":"` + layer + `","total":4000000,"completed":0}
{"status":"pulling 0123456789ab","digest":"` + layer + `","total":4000000,"completed":999999}
{"status":"pulling 0123456789ab","digest":"` + layer + `","total":4000000,"completed":1000000}
{"status":"pulling 0123456789ab","digest":"` + layer + `","total":4000000,"completed":3999999}
{"status":"pulling 0123456789ab","digest":"` + layer + `","total":4000000,"completed":4000000}
{"status":"pulling short","digest":"sha256:abc","total":200000,"completed":200000}
{"status":"pulling empty","digest":"sha256:def","total":0}
{"status":"verifying sha256 digest"}
{"status":"success"}
{"status":"after the end"}
`, []string{"pulling manifest",
			"pulling 0123456789ab 0123456789ab 0% of 4.0 MB", "pulling 0123456789ab 0123456789ab 25% of 4.0 MB",
			"pulling 0123456789ab 0123456789ab 75% of 4.0 MB", "pulling 0123456789ab 0123456789ab 100% of 4.0 MB",
			"pulling short abc 100% of 0.2 MB", "pulling empty", "verifying sha256 digest", "success"}, ""},
		{"error line", 200, `{"status":"pulling manifest"}
{"error":"pull model manifest: file does not exist"}
`, []string{"pulling manifest"}, "pull model manifest: file does not exist"},
		{"malformed", 200, "{\"status\":\"pulling manifest\"}\nnot json\n", []string{"pulling manifest"},
			`reading the pull stream: invalid character 'o' in literal null (expecting 'u') (line "not json")`},
		{"ends early", 200, `{"status":"pulling manifest"}
{"status":"pulling 0123456789ab","digest":"` + layer + `","total":4000000,"completed":0}
`, []string{"pulling manifest", "pulling 0123456789ab 0123456789ab 0% of 4.0 MB"},
			`the pull stream ended before "success" (last status "pulling 0123456789ab")`},
		{"refused", 500, `{"error":"no space left"}`, nil, "5xx: server error (500 Internal Server Error). Server said: no space left."},
		{"line too long", 200, "{\"status\":\"" + strings.Repeat("x", 1<<20) + "\"}\n", nil, "reading the pull stream: bufio.Scanner: token too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/pull" {
					http.NotFound(w, r)
					return
				}
				json.NewDecoder(r.Body).Decode(&sent)
				w.WriteHeader(c.status)
				w.Write([]byte(c.stream))
			}))
			defer srv.Close()
			var progress []string
			err := mustNew(t, backends.Config{URL: srv.URL}).PullModel(context.Background(), "tiny", func(s string) { progress = append(progress, s) })
			if gotErr := errString(err); gotErr != c.err || !reflect.DeepEqual(progress, c.progress) {
				t.Fatalf("error %q, progress %q\nwant %q, %q", gotErr, progress, c.err, c.progress)
			}
			if sent["model"] != "tiny" || sent["stream"] != true {
				t.Fatalf("pull request %v, want model tiny, streamed", sent)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A url ending in /v1 that has no /api/version is an openai url: the probe says so.
func TestProbeHintsAtV1(t *testing.T) {
	status := http.StatusNotFound
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	hint := " An ollama backend's url is the server root, without /v1 (that is for an openai backend): did you mean " + srv.URL + "?"
	for _, c := range []struct {
		url    string
		status int
		hint   bool
	}{{srv.URL + "/v1", 404, true}, {srv.URL + "/v1/", 404, true}, {srv.URL, 404, false}, {srv.URL + "/v1", 500, false}} {
		status = c.status
		r := mustNew(t, backends.Config{URL: c.url}).Probe(context.Background(), []string{"tiny"})
		if len(r.Problems) != 1 || strings.HasSuffix(r.Problems[0], hint) != c.hint || !r.Reachable {
			t.Errorf("url %s, status %d: reachable %v, problems %q; want the /v1 hint: %v", c.url, c.status, r.Reachable, r.Problems, c.hint)
		}
	}
	// A url ending in /api (the native API's own prefix) is the root too.
	status = http.StatusNotFound
	hint = " An ollama backend's url is the server root, without /api (planrun adds /api/chat and the rest): did you mean " + srv.URL + "?"
	for _, url := range []string{srv.URL + "/api", srv.URL + "/api/"} {
		r := mustNew(t, backends.Config{URL: url}).Probe(context.Background(), []string{"tiny"})
		if len(r.Problems) != 1 || !strings.HasSuffix(r.Problems[0], hint) {
			t.Errorf("url %s: problems %q; want the /api hint", url, r.Problems)
		}
	}
}

// WarmConnections opens connections to the real server ahead of a schedule.
func TestRealOllamaWarmConnections(t *testing.T) {
	s := realOllama(t)
	if n := mustNew(t, backends.Config{Name: "ollama.real", URL: s.URL}).WarmConnections(context.Background(), 3); n != 3 {
		t.Fatalf("WarmConnections(3) = %d", n)
	}
	if n := mustNew(t, backends.Config{Name: "ollama.down", URL: "http://127.0.0.1:1"}).WarmConnections(context.Background(), 2); n != 0 {
		t.Fatalf("WarmConnections on no server = %d, want 0", n)
	}
}

// A model without a trained context in its metadata keeps the num_ctx it runs with;
// with neither, its context is unknown.
func TestContextLengthWithoutTrainedContext(t *testing.T) {
	for params, want := range map[string]int{"num_ctx 512": 512, "": 0} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/api/show":
				json.NewEncoder(w).Encode(map[string]any{"parameters": params, "model_info": map[string]any{"general.architecture": "llama"}})
			case "/api/ps":
				json.NewEncoder(w).Encode(map[string]any{"models": []any{}})
			default:
				http.NotFound(w, r)
			}
		}))
		n, ok := mustNew(t, backends.Config{URL: srv.URL}).ContextLength(context.Background(), "m")
		srv.Close()
		if n != want || ok != (want > 0) {
			t.Fatalf("parameters %q: ContextLength = %d, %v; want %d, %v", params, n, ok, want, want > 0)
		}
	}
}
