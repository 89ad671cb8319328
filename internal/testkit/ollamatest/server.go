// Package ollamatest starts a real Ollama server on a free loopback port, serving
// the tiny model from internal/tinymodel, for integration tests and CI.
//
// The binary is the pinned build that scripts/install-ollama.sh puts in
// <repo>/.tools/bin (or the one named by PLANRUN_OLLAMA). A missing binary skips the
// test naming that script, or fails it under PLANRUN_INTEGRATION (realserver.Missing).
//
// Each Server owns a temporary directory (models, HOME, logs) and the process
// group of `ollama serve` and its runners; Stop ends the whole group.
//
// One server per test:
//
//	s := ollamatest.Start(t) // stopped when t ends
//	resp, err := http.Post(s.URL+"/api/generate", ...) // model s.Model
//
// One server per package, from TestMain:
//
//	srv, err := ollamatest.StartServer(dir) // then m.Run(), then srv.Stop()
package ollamatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/procgroup"
	"github.com/planrun/planrun/internal/testkit/realserver"
	"github.com/planrun/planrun/internal/tinymodel"
)

// BinaryEnv names the environment variable that overrides the ollama binary's path.
const BinaryEnv = "PLANRUN_OLLAMA"

// PinnedVersion is the Ollama version scripts/install-ollama.sh builds, as the server
// reports it at /api/version; tests that check a reported version compare with it.
const PinnedVersion = "0.17.4"

// ModelName is the name the tiny model is created under.
const ModelName = "tiny"

// NumParallel is the OLLAMA_NUM_PARALLEL the server runs with. Ollama otherwise
// picks it from free memory, which would make concurrency tests machine-dependent.
const NumParallel = 4

// Timeouts for start-up; generous because CI machines are small and shared.
const (
	readyTimeout  = 60 * time.Second
	createTimeout = 120 * time.Second
	stopGrace     = 10 * time.Second
)

// Server is a running `ollama serve` with the tiny model created.
type Server struct {
	URL     string // base URL, http://127.0.0.1:PORT (no trailing slash, no /v1)
	Model   string // the model name to request: ModelName
	Version string // as the server reports it at /api/version
	Binary  string // path of the ollama binary that runs
	Dir     string // the server's private directory: model files, OLLAMA_MODELS, HOME, log
	LogPath string // serve's and create's combined output

	StartupTime time.Duration // from exec to /api/version answering
	CreateTime  time.Duration // `ollama create` of the tiny model

	cmd      *exec.Cmd
	guard    *procgroup.Guard
	log      *os.File
	exited   chan struct{} // closed when serve has exited
	waitErr  error         // serve's exit status, valid once exited is closed
	stopOnce sync.Once
	stopErr  error

	thinkOnce sync.Once
	thinkErr  error
}

// Start starts a server for one test (or benchmark), fails it with the server's
// log if that is impossible, and stops the server when the test ends. The
// directory is the test's TempDir.
func Start(t testing.TB) *Server {
	t.Helper()
	Require(t)
	s, err := StartServer(t.TempDir())
	if err != nil {
		t.Fatalf("ollamatest: %v", err)
	}
	t.Logf("ollamatest: %s (version %s) ready in %v, model %q created in %v",
		s.URL, s.Version, s.StartupTime.Round(time.Millisecond), s.Model, s.CreateTime.Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ollamatest: server log %s (tail):\n%s", s.LogPath, s.LogTail(8<<10))
		}
		if err := s.Stop(); err != nil {
			t.Errorf("ollamatest: %v", err)
		}
	})
	return s
}

// StartServer starts a server whose files live under dir, for callers without a
// testing.TB (TestMain, the quickstart). The caller must call Stop. On error,
// nothing is left running and the error carries the tail of the server log.
func StartServer(dir string) (*Server, error) {
	if err := checkPlatform(); err != nil {
		return nil, err
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	modelfile, err := tinymodel.WriteDir(filepath.Join(dir, "model"), tinymodel.DefaultConfig())
	if err != nil {
		return nil, err
	}
	// A free port can be taken between our probe and serve's bind; try a few.
	for attempt := 1; ; attempt++ {
		s, err := start(bin, dir, attempt)
		if err == nil {
			err = s.create(modelfile)
			if err == nil {
				return s, nil
			}
		}
		var stopErr error
		if s != nil {
			stopErr = s.Stop()
			err = fmt.Errorf("%w\nserver log %s (tail):\n%s", err, s.LogPath, s.LogTail(8<<10))
		}
		if stopErr != nil || attempt == 3 || s == nil || !s.lostPortRace() {
			return nil, errors.Join(err, stopErr)
		}
	}
}

// install is the pinned build: $PLANRUN_OLLAMA, else <repo>/.tools/bin/ollama.
var install = realserver.Install{Env: BinaryEnv, Path: filepath.Join(".tools", "bin", "ollama"), Name: "the ollama binary",
	Label: "ollama binary", Hint: "run scripts/install-ollama.sh to build the pinned version"}

// Binary returns the ollama binary the tests run: $PLANRUN_OLLAMA, else
// <repo>/.tools/bin/ollama. The error says how to install it.
func Binary() (string, error) { return install.Find() }

// Require returns the ollama binary for t, which it skips (or fails, under
// PLANRUN_INTEGRATION) naming scripts/install-ollama.sh when there is none.
func Require(t testing.TB) string { t.Helper(); return realserver.Require(t, install) }

// start execs `ollama serve` on a free port and waits until it answers.
func start(bin, dir string, attempt int) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	home := filepath.Join(dir, "home")
	models := filepath.Join(dir, "models")
	for _, d := range []string{home, models} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	logPath := filepath.Join(dir, fmt.Sprintf("ollama-%d.log", attempt))
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = serverEnv(addr, models, home)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own group that dies with this process: a test binary killed by a timeout or
	// SIGKILL leaves neither serve nor its runners behind.
	guard, err := procgroup.Start(cmd)
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	s := &Server{
		URL:     "http://" + addr,
		Model:   ModelName,
		Binary:  bin,
		Dir:     dir,
		LogPath: logPath,
		cmd:     cmd,
		guard:   guard,
		log:     log,
		exited:  make(chan struct{}),
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()

	began := time.Now()
	version, err := s.waitReady(readyTimeout)
	if err != nil {
		return s, err
	}
	s.StartupTime = time.Since(began)
	s.Version = version
	return s, nil
}

// serverEnv is the caller's environment without OLLAMA_* settings (a developer's
// OLLAMA_HOST or OLLAMA_MODELS must not leak in), plus the server's own.
func serverEnv(addr, models, home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OLLAMA_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"OLLAMA_HOST="+addr,
		"OLLAMA_MODELS="+models,
		"HOME="+home,
		"OLLAMA_NUM_PARALLEL="+strconv.Itoa(NumParallel),
	)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls /api/version until it answers, serve exits, or the timeout passes.
func (s *Server) waitReady(timeout time.Duration) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(s.URL + "/api/version")
		if err == nil {
			var v struct {
				Version string `json:"version"`
			}
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				return v.Version, nil
			}
			err = fmt.Errorf("GET /api/version: status %s: %v", resp.Status, err)
		}
		select {
		case <-s.exited:
			return "", fmt.Errorf("ollama serve exited before it was ready: %v", s.waitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("ollama serve at %s not ready after %v: %v", s.URL, timeout, err)
		}
	}
}

// lostPortRace reports whether serve failed because another process took its port.
func (s *Server) lostPortRace() bool {
	b, _ := os.ReadFile(s.LogPath)
	return bytes.Contains(b, []byte("address already in use"))
}

// create runs `ollama create tiny -f Modelfile` against this server.
func (s *Server) create(modelfile string) error { return s.createModel(s.Model, modelfile) }

// ThinkingModelName is the name CreateThinking creates the thinking model under.
const ThinkingModelName = "tiny-think"

// CreateThinking creates the tiny model's thinking variant (tinymodel.WriteThinkingDir:
// Ollama lists it as "thinking" capable and streams its reasoning as "thinking") once
// per server, and returns its name.
func (s *Server) CreateThinking() (string, error) {
	s.thinkOnce.Do(func() {
		mf, err := tinymodel.WriteThinkingDir(filepath.Join(s.Dir, "think"), tinymodel.DefaultConfig())
		if err == nil {
			err = s.createModel(ThinkingModelName, mf)
		}
		s.thinkErr = err
	})
	return ThinkingModelName, s.thinkErr
}

func (s *Server) createModel(name, modelfile string) error {
	ctx, cancel := context.WithTimeout(context.Background(), createTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Binary, "create", name, "-f", modelfile)
	cmd.Dir = filepath.Dir(modelfile)
	cmd.Env = serverEnv(strings.TrimPrefix(s.URL, "http://"), filepath.Join(s.Dir, "models"), filepath.Join(s.Dir, "home"))
	fmt.Fprintf(s.log, "\n--- ollamatest: ollama create %s -f %s\n", name, modelfile)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	began := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ollama create %s: %w", name, err)
	}
	took := time.Since(began)
	if name == s.Model {
		s.CreateTime = took
	}
	fmt.Fprintf(s.log, "--- ollamatest: created in %v\n", took)
	return nil
}

// LogTail returns at most the last max bytes of the server log, for failure messages.
func (s *Server) LogTail(max int64) string {
	f, err := os.Open(s.LogPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// PID is the process id of `ollama serve`, which is also its process group id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Processes lists the live processes of the server's process group: serve and
// the model runners it started.
func (s *Server) Processes() []int { return groupMembers(s.PID()) }

// Stop ends the server's whole process group: SIGTERM, then SIGKILL after a
// grace period, and returns an error naming any process still alive. Safe to
// call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.stop()
		s.log.Close()
	})
	return s.stopErr
}

func (s *Server) stop() error {
	pgid := s.PID()
	signalGroup(pgid, false)
	select {
	case <-s.exited:
	case <-time.After(stopGrace):
	}
	// Runners can outlive serve for a moment; whatever is left after the grace dies now.
	if !groupGone(pgid, stopGrace) {
		signalGroup(pgid, true)
		<-s.exited
		if !groupGone(pgid, stopGrace) {
			return fmt.Errorf("ollama server group %d: processes %v still alive after SIGKILL", pgid, groupMembers(pgid))
		}
	}
	<-s.exited
	s.guard.Release()
	return nil
}

// groupGone waits up to timeout for the process group to have no live member.
func groupGone(pgid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for len(groupMembers(pgid)) > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
