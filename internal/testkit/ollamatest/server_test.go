package ollamatest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/realserver"
	"github.com/planrun/planrun/servers"
)

const maxTokens = 16

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := bufio.NewReader(resp.Body).ReadString(0)
		resp.Body.Close()
		t.Fatalf("POST %s: %s: %s", url, resp.Status, msg)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// generate streams one /api/generate request and returns the text, the number of
// lines that carried text, and the done line's eval_count.
func generate(t *testing.T, s *Server) (text string, chunks, evalCount int) {
	t.Helper()
	resp := post(t, s.URL+"/api/generate", map[string]any{
		"model":   s.Model,
		"prompt":  "hello world, the model",
		"stream":  true,
		"options": map[string]any{"num_predict": maxTokens, "seed": 42},
	})
	var sb strings.Builder
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var line struct {
			Response  string `json:"response"`
			Done      bool   `json:"done"`
			EvalCount int    `json:"eval_count"`
			Error     string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("NDJSON line %q: %v", sc.Text(), err)
		}
		if line.Error != "" {
			t.Fatalf("server error in stream: %s", line.Error)
		}
		if line.Response != "" {
			chunks++
			sb.WriteString(line.Response)
		}
		if line.Done {
			done, evalCount = true, line.EvalCount
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading stream: %v", err)
	}
	if !done {
		t.Fatal("stream ended without a done line")
	}
	return sb.String(), chunks, evalCount
}

func TestGenerateStreamsTokens(t *testing.T) {
	s := Start(t)
	// Results record the server version; go install alone would leave "0.0.0".
	if s.Version != PinnedVersion {
		t.Errorf("/api/version = %q, want the pinned %s: rebuild with scripts/install-ollama.sh, which stamps the version", s.Version, PinnedVersion)
	}
	text, chunks, evalCount := generate(t, s)
	t.Logf("/api/generate: eval_count=%d, %d content chunks, text %q", evalCount, chunks, text)
	if evalCount < 1 || evalCount > maxTokens {
		t.Errorf("eval_count = %d, want 1..%d (num_predict)", evalCount, maxTokens)
	}
	if chunks < 1 || text == "" {
		t.Errorf("no generated text arrived (%d chunks)", chunks)
	}
	if chunks > evalCount {
		t.Errorf("%d content chunks for %d tokens: a chunk carries at least one token", chunks, evalCount)
	}
	checkBuild(t, s)
}

// checkBuild reads the build the pinned Ollama reports once its runner has loaded a model
// (the log's msg=system line) and fails when it lacks a vector level this CPU has: the
// install must bring the CPU libraries the release loads (issue 47: without them the
// generic cgo backend decodes 10-34x slower).
func checkBuild(t *testing.T, s *Server) {
	t.Helper()
	log, err := os.ReadFile(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := servers.ParseBuild(log)
	if !ok {
		t.Fatalf("the server log has no msg=system line after a generation:\n%s", s.LogTail(8<<10))
	}
	t.Logf("engine build: %s", b)
	cpu := servers.CPUFlags()
	levels := slices.DeleteFunc(b.Missing(cpu), func(x string) bool { return x != "AVX" && x != "AVX2" && x != "AVX512" })
	if len(levels) > 0 || b.Library == "" && cpu["avx"] {
		t.Errorf("the pinned Ollama runs without %v, which this CPU has, and loaded CPU library %q (%s): rebuild it with "+
			"scripts/install-ollama.sh, which installs the CPU libraries into .tools/lib/ollama", levels, b.Library, b.Note(cpu))
	}
}

func TestChatCompletionsStreamUsage(t *testing.T) {
	s := Start(t)
	resp := post(t, s.URL+"/v1/chat/completions", map[string]any{
		"model":          s.Model,
		"messages":       []map[string]string{{"role": "user", "content": "hello world, the model"}},
		"max_tokens":     maxTokens,
		"seed":           42,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	})
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}

	var (
		text             strings.Builder
		chunks, events   int
		completionTokens = -1
		sawDone          bool
	)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue // blank separators between events
		}
		if data == "[DONE]" {
			sawDone = true
			continue
		}
		events++
		var ev struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("SSE data %q: %v", data, err)
		}
		for _, c := range ev.Choices {
			if c.Delta.Content != "" {
				chunks++
				text.WriteString(c.Delta.Content)
			}
		}
		if ev.Usage != nil {
			completionTokens = ev.Usage.CompletionTokens
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading stream: %v", err)
	}
	t.Logf("/v1/chat/completions: usage.completion_tokens=%d, %d content chunks in %d events, text %q",
		completionTokens, chunks, events, text.String())
	if !sawDone {
		t.Error("stream ended without data: [DONE]")
	}
	if completionTokens < 1 || completionTokens > maxTokens {
		t.Errorf("usage.completion_tokens = %d, want 1..%d (-1: no usage chunk)", completionTokens, maxTokens)
	}
	if chunks < 1 || text.Len() == 0 {
		t.Errorf("no generated text arrived (%d chunks)", chunks)
	}
}

// Stop must leave nothing behind: neither serve nor the runner it forked to hold the model.
func TestStopLeavesNoProcess(t *testing.T) {
	Require(t)
	s, err := StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	generate(t, s) // loads the model: a runner process joins the group

	pids := s.Processes()
	if !slices.Contains(pids, s.PID()) || len(pids) < 2 {
		t.Errorf("process group %d = %v, want serve and at least one runner", s.PID(), pids)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the server is still alive after Stop", pid)
		}
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := http.Get(s.URL + "/api/version"); err == nil {
		t.Errorf("%s still answers after Stop", s.URL)
	}
}

// alive reports whether pid names a process that is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && !bytes.HasPrefix(bytes.TrimSpace(b[i+1:]), []byte("Z"))
}

func TestBinaryNotFound(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T)
		want  []string
	}{
		{
			name:  "env names a missing file",
			setup: func(t *testing.T) { t.Setenv(BinaryEnv, filepath.Join(t.TempDir(), "nope")) },
			want:  []string{BinaryEnv, "nope"},
		},
		{
			name: "repo without .tools",
			setup: func(t *testing.T) {
				t.Setenv(BinaryEnv, "")
				root := t.TempDir()
				sub := filepath.Join(root, "internal", "pkg")
				if err := os.MkdirAll(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Chdir(sub)
			},
			want: []string{"run scripts/install-ollama.sh", filepath.Join(".tools", "bin", "ollama")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup(t)
			_, err := Binary()
			if err == nil {
				t.Fatal("Binary() found a binary")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if _, err := StartServer(t.TempDir()); err == nil {
				t.Error("StartServer succeeded without a binary")
			}
		})
	}
}

// BenchmarkStart measures what each integration test pays: serve ready plus create.
func BenchmarkStart(b *testing.B) {
	Require(b)
	for b.Loop() {
		s, err := StartServer(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.StartupTime.Milliseconds()), "ready-ms")
		b.ReportMetric(float64(s.CreateTime.Milliseconds()), "create-ms")
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// The constant the tests compare reported versions with is the version the install
// script builds, so bumping the pin in one place and not the other fails here.
func TestPinnedVersionIsTheInstallScriptsDefault(t *testing.T) {
	root, err := realserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "scripts", "install-ollama.sh"))
	if err != nil {
		t.Fatal(err)
	}
	want := `OLLAMA_VERSION="${OLLAMA_VERSION:-v` + PinnedVersion + `}"`
	if !strings.Contains(string(b), want) {
		t.Errorf("scripts/install-ollama.sh lacks %s: PinnedVersion and the script's default disagree", want)
	}
}
