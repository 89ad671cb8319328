// Package vllmtest starts a real vLLM server (the pinned CPU build that
// scripts/install-vllm.sh installs) on a free loopback port, serving the tiny
// Hugging Face checkpoint from internal/tinymodel, for integration tests and CI.
//
// A missing install skips the test naming the install command, or fails it under
// PLANRUN_INTEGRATION (realserver.Missing). The server runs through servers.Start:
// its own process group, SIGKILLed by the kernel if the test binary dies
// (Pdeathsig), and stopped as a group at the end.
//
// One server per test binary, from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(vllmtest.Main(m)) }
//	s := vllmtest.Shared(t) // s.URL + "/v1", model s.Model
package vllmtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/realserver"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/servers"
)

// BinaryEnv names the environment variable that overrides the vllm-serve starter's path.
const BinaryEnv = "PLANRUN_VLLM"

// ModelName is the name vLLM serves the tiny model under (--served-model-name).
const ModelName = "tiny"

// MaxModelLen is the --max-model-len the server runs with: the context a test can
// overflow with a prompt of a few hundred words.
const MaxModelLen = 512

// readyTimeout is generous: vLLM imports torch (and, without Eager, compiles its graphs)
// before /health answers: about a minute on a quiet 2-core machine, over 5 minutes
// compiling at load 40 (CI's run of 2026-12-07 timed out at 5).
const readyTimeout = 10 * time.Minute

// Server is a running vLLM with the tiny model.
type Server struct {
	URL         string // base URL, http://127.0.0.1:PORT (no /v1)
	Model       string // ModelName
	ModelDir    string // the checkpoint directory vLLM loads
	StartupTime time.Duration
	proc        *servers.Process
}

// install is the pinned build's starter: $PLANRUN_VLLM, else <repo>/.tools/bin/vllm-serve.
var install = realserver.Install{Env: BinaryEnv, Path: filepath.Join(".tools", "bin", "vllm-serve"), Name: "vllm-serve",
	Label: "vLLM", Hint: "run scripts/install-vllm.sh to install the pinned vLLM CPU build"}

// Binary returns the vllm-serve starter the tests run: $PLANRUN_VLLM, else
// <repo>/.tools/bin/vllm-serve. The error says how to install it.
func Binary() (string, error) { return install.Find() }

// Require is the vllm-serve starter for a test that starts its own server, under the
// one integration policy (realserver.Require): missing, t skips naming how to install
// it, or fails with PLANRUN_INTEGRATION set.
func Require(t testing.TB) string { t.Helper(); return realserver.Require(t, install) }

// Options choose what StartServerWith serves beyond the default.
type Options struct {
	// Reasoning serves the checkpoint with think tags (tinymodel's ThinkTags: <think> and
	// </think> as added tokens, </think> likely) under --reasoning-parser deepseek_r1, so
	// vLLM streams the text before </think> as reasoning.
	Reasoning bool
	// Pooling serves the default checkpoint with vLLM's pooling runner as an embedding
	// model (--runner pooling --convert embed): /v1/embeddings instead of generation.
	Pooling bool
	// LoRA serves the tiny LoRA adapters LoRANames beside the base model (tinymodel's
	// DefaultLoRA, seeds 2, 3, ...): --enable-lora --lora-modules NAME=DIR ...
	// --max-lora-rank and --max-loras for all of them at once.
	LoRA bool
	// Dtype, when set, is vLLM's --dtype ("float16"); the checkpoint's own torch_dtype
	// (bfloat16) otherwise.
	Dtype string
	// Eager runs without torch.compile (--enforce-eager): a start in seconds rather than
	// minutes of compiling, for a test whose figures do not depend on speed.
	Eager bool
	// ReadyTimeout, when set, replaces the 10 minutes a start may take: a test that
	// starts servers of its own on a loaded machine (a start took 10 minutes at load 30).
	ReadyTimeout time.Duration
	// Agentic serves the dev routes (VLLM_SERVER_DEV_MODE=1: /reset_prefix_cache),
	// reports cached prompt tokens in the usage (--enable-prompt-tokens-details) and can
	// be made to call tools: the pinned vLLM refuses tool_choice "required" or a named
	// tool unless it has a tool parser, which it loads only with both
	// --enable-auto-tool-choice and --tool-call-parser (any; hermes needs no special
	// token), though guided decoding, not the parser, then makes the call.
	Agentic bool
}

// LoRANames are the adapters a server of Options{LoRA: true} serves, in /v1/models
// beside ModelName (their parent).
var LoRANames = []string{"tiny-lora-a", "tiny-lora-b"}

// loraArgs writes the adapters of LoRANames under dir and returns the flags that serve
// them.
func loraArgs(dir string, base tinymodel.Config) ([]string, error) {
	args := []string{"--enable-lora", "--lora-modules"}
	rank := 0
	for i, name := range LoRANames {
		l := tinymodel.DefaultLoRA(uint64(2 + i))
		adapter := filepath.Join(dir, name)
		if err := tinymodel.WriteLoRADir(adapter, base, l); err != nil {
			return nil, err
		}
		args = append(args, name+"="+adapter)
		rank = max(rank, l.Rank)
	}
	return append(args, "--max-lora-rank", strconv.Itoa(rank), "--max-loras", strconv.Itoa(len(LoRANames))), nil
}

// StartServerWith writes the tiny checkpoint under dir and starts vLLM on it with
// --enable-prefix-caching and --max-model-len MaxModelLen, plus o's additions. The caller
// must call Stop.
func StartServerWith(dir string, o Options) (*Server, error) {
	for attempt := 1; ; attempt++ {
		s, err := startServer(dir, o)
		if err == nil || attempt == 3 || !portTaken(dir) {
			return s, err
		}
		// FreePort's port is free when it answers, not when vLLM binds it some seconds
		// later: another test's server or a client's ephemeral port may take it first
		// (CI's run of 2026-12-07 lost three tests to "Address already in use").
		fmt.Fprintf(os.Stderr, "vllmtest: the port was taken before vLLM bound it (attempt %d): starting again on another\n", attempt)
		log := filepath.Join(dir, "vllm.log") // the server appends: keep this attempt's apart
		if err := os.Rename(log, fmt.Sprintf("%s.%d", log, attempt)); err != nil {
			return nil, err
		}
	}
}

// portTaken reports whether the server in dir exited because its port was taken.
func portTaken(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "vllm.log"))
	return err == nil && strings.Contains(string(b), "Address already in use")
}

// startServer is one attempt of StartServerWith, on a port free when it asks.
func startServer(dir string, o Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	model := filepath.Join(dir, "model")
	c := tinymodel.HFConfig()
	c.ThinkTags = o.Reasoning
	if err := tinymodel.WriteHFDir(model, c); err != nil {
		return nil, err
	}
	port, err := servers.FreePort()
	if err != nil {
		return nil, err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	command := []string{bin, "--model", model, "--served-model-name", ModelName,
		"--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--max-model-len", strconv.Itoa(MaxModelLen), "--enable-prefix-caching"}
	if o.Reasoning {
		command = append(command, "--reasoning-parser", "deepseek_r1")
	}
	if o.Eager {
		command = append(command, "--enforce-eager")
	}
	if o.Dtype != "" {
		command = append(command, "--dtype", o.Dtype)
	}
	if o.Pooling {
		command = append(command, "--runner", "pooling", "--convert", "embed")
	}
	var env map[string]string
	if o.Agentic {
		// tool_choice "required" or a named tool: guided decoding, but vLLM 0.32 answers 400
		// unless a tool-call parser is loaded, which it does only with auto tool choice on.
		command = append(command, "--enable-prompt-tokens-details", "--enable-auto-tool-choice", "--tool-call-parser", "hermes")
		env = map[string]string{"VLLM_SERVER_DEV_MODE": "1"}
	}
	if o.LoRA {
		args, err := loraArgs(dir, c)
		if err != nil {
			return nil, err
		}
		command = append(command, args...)
	}
	spec := servers.Spec{
		Name:         "vllm",
		Command:      command,
		Dir:          dir,
		ReadyURL:     url + "/health",
		ReadyTimeout: cmp.Or(o.ReadyTimeout, readyTimeout),
		StopSignal:   "SIGINT",
		Grace:        30 * time.Second,
		Log:          filepath.Join(dir, "vllm.log"),
		Env:          env,
	}
	p, err := servers.Start(context.Background(), spec, servers.Options{})
	if err != nil {
		return nil, err
	}
	return &Server{URL: url, Model: ModelName, ModelDir: model, StartupTime: p.StartupTime(), proc: p}, nil
}

// Stop ends the server's process group (vLLM's API server and its engine core).
func (s *Server) Stop() error { return s.proc.Stop() }

// sharedWith is the test binary's one real vLLM of options o.
func sharedWith(o Options) *realserver.Shared[*Server] {
	return &realserver.Shared[*Server]{Name: "vllmtest", Pattern: "planrun-vllm-", Install: install, Start: func(dir string) (*Server, error) {
		s, err := StartServerWith(dir, o)
		if err == nil {
			fmt.Fprintf(os.Stderr, "vllmtest: %s ready in %v\n", s.URL, s.StartupTime.Round(time.Millisecond))
		}
		return s, err
	}}
}

// The shared servers run eager: the tests that share them check protocols, counts and
// timing against vLLM's own clocks, none of which depends on compiled kernels, and a
// compiled start on a loaded 2-core machine takes minutes per test binary.
var (
	shared          = sharedWith(Options{Eager: true})
	sharedReasoning = sharedWith(Options{Eager: true, Reasoning: true})
	sharedPooling   = sharedWith(Options{Eager: true, Pooling: true})
	sharedLoRA      = sharedWith(Options{Eager: true, LoRA: true})
	sharedAgentic   = sharedWith(Options{Eager: true, Agentic: true})
)

// Shared returns the test binary's real vLLM, starting it on first use; a package
// that calls it runs its tests through Main.
func Shared(t testing.TB) *Server {
	t.Helper()
	return shared.Get(t)
}

// SharedReasoning is Shared for a server of Options{Reasoning: true}.
func SharedReasoning(t testing.TB) *Server { t.Helper(); return sharedReasoning.Get(t) }

// SharedPooling is Shared for a server of Options{Pooling: true}.
func SharedPooling(t testing.TB) *Server { t.Helper(); return sharedPooling.Get(t) }

// SharedLoRA is Shared for a server of Options{LoRA: true}.
func SharedLoRA(t testing.TB) *Server { t.Helper(); return sharedLoRA.Get(t) }

// SharedAgentic is Shared for a server of Options{Agentic: true, Eager: true}.
func SharedAgentic(t testing.TB) *Server { t.Helper(); return sharedAgentic.Get(t) }

// Main runs the package's tests and then stops the shared servers: TestMain's body,
// os.Exit(vllmtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if err := StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "vllmtest:", err)
		code = 1
	}
	return code
}

// StopShared stops the shared server if a test started it, for a TestMain that also
// runs another helper's Main (one TestMain per test binary).
func StopShared() error {
	return errors.Join(shared.Stop(), sharedReasoning.Stop(), sharedPooling.Stop(), sharedLoRA.Stop(), sharedAgentic.Stop())
}
