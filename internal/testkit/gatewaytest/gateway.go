// Package gatewaytest starts a real LiteLLM proxy on a free loopback port, in front of
// real engines, for integration tests of the taotoken backend: the stand-in for the
// TaoToken gateway's "one key, many models".
//
// The proxy is the pinned install that scripts/install-litellm.sh puts in
// <repo>/.tools/litellm (or the litellm named by PLANRUN_LITELLM). A missing install
// skips the test naming the install command, or fails it under PLANRUN_INTEGRATION.
//
// The proxy runs through package servers, as a plan's server block does: in its own
// process group, killed by the kernel if the test binary dies (Pdeathsig), stopped with
// the test. Its config is written per test from Options, with the custom_auth hook of
// examples/gateway (a wrong key is a 401; per-model requests-per-minute limits) and
// the master key read from Options.KeyEnv, never written anywhere.
package gatewaytest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/realserver"
	"github.com/planrun/planrun/servers"
)

// BinaryEnv names the environment variable that overrides the litellm executable's path.
const BinaryEnv = "PLANRUN_LITELLM"

// InstallCommand installs the pinned proxy where Binary looks for it.
const InstallCommand = "scripts/install-litellm.sh"

// OfflineEnv keeps LiteLLM from fetching its model cost map from the internet at start;
// with it, a start and requests make no connection off the loopback (checked with strace).
var OfflineEnv = map[string]string{"LITELLM_LOCAL_MODEL_COST_MAP": "True"}

// Route sends requests for model Name to an engine's OpenAI-compatible base URL (with /v1)
// that serves it as Model.
type Route struct {
	Name    string
	APIBase string
	Model   string
}

// Options configure one proxy.
type Options struct {
	KeyEnv   string         // the variable holding the one key (the master key)
	Routes   []Route        // model names and where they go
	ModelRPM map[string]int // requests per minute per model name, for the key; none when empty
}

// Gateway is a running LiteLLM proxy.
type Gateway struct {
	URL        string // base URL with /v1, as the taotoken backend's url
	ConfigPath string
	LogPath    string
	Startup    time.Duration // from exec to /health/liveliness answering
	proc       *servers.Process
}

// Start starts a proxy for one test and stops it when the test ends; it fails the test
// with the log's tail if the proxy does not come up.
func Start(t testing.TB, o Options) *Gateway {
	t.Helper()
	bin := Require(t)
	dir := t.TempDir()
	cfg, err := WriteConfig(dir, o)
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/v1", ConfigPath: cfg, LogPath: filepath.Join(dir, "litellm.log")}
	spec := servers.Spec{
		Name:     "litellm",
		Command:  []string{bin, "--config", cfg, "--host", "127.0.0.1", "--port", strconv.Itoa(port)},
		Env:      OfflineEnv,
		Dir:      dir,
		ReadyURL: "http://127.0.0.1:" + strconv.Itoa(port) + "/health/liveliness",
		// Importing the proxy takes about 10 s on an idle 2-core machine.
		ReadyTimeout: 2 * time.Minute,
		Grace:        10 * time.Second,
		Log:          g.LogPath,
	}
	began := time.Now()
	g.proc, err = servers.Start(context.Background(), spec, servers.Options{})
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	g.Startup = time.Since(began)
	t.Logf("gatewaytest: LiteLLM at %s ready in %v", g.URL, g.Startup.Round(time.Millisecond))
	t.Cleanup(func() {
		if err := g.proc.Stop(); err != nil {
			t.Errorf("gatewaytest: stop: %v", err)
		}
	})
	return g
}

// install is the pinned proxy: $PLANRUN_LITELLM, else <repo>/.tools/litellm/bin/litellm.
var install = realserver.Install{Env: BinaryEnv, Path: filepath.Join(".tools", "litellm", "bin", "litellm"), Name: "litellm",
	Label: "LiteLLM proxy", Hint: "run " + InstallCommand + " to install the pinned version"}

// Binary returns the litellm executable: $PLANRUN_LITELLM, else
// <repo>/.tools/litellm/bin/litellm. The error says how to install it.
func Binary() (string, error) { return install.Find() }

// Require returns the litellm executable for t, which it skips (or fails, under
// PLANRUN_INTEGRATION) naming the install command when there is none.
func Require(t testing.TB) string { t.Helper(); return realserver.Require(t, install) }

// binaryIn is the install under repository root.
func binaryIn(root string) (string, error) { return install.In(root) }

// WriteConfig writes the proxy's config (JSON, which LiteLLM's YAML loader reads) and the
// custom_auth hook beside it, where LiteLLM imports it from, and returns the config's path.
func WriteConfig(dir string, o Options) (string, error) {
	if o.KeyEnv == "" || len(o.Routes) == 0 {
		return "", errors.New("gatewaytest: Options need KeyEnv and at least one Route")
	}
	root, err := realserver.RepoRoot()
	if err != nil {
		return "", err
	}
	hook, err := os.ReadFile(filepath.Join(root, "examples", "gateway", "gateway_auth.py"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "gateway_auth.py"), hook, 0o644); err != nil {
		return "", err
	}
	type params struct {
		Model   string `json:"model"`
		APIBase string `json:"api_base"`
		APIKey  string `json:"api_key"`
	}
	type entry struct {
		ModelName string `json:"model_name"`
		Params    params `json:"litellm_params"`
	}
	var list []entry
	for _, r := range o.Routes {
		list = append(list, entry{r.Name, params{"openai/" + r.Model, r.APIBase, "none"}})
	}
	settings := map[string]any{
		"master_key":  "os.environ/" + o.KeyEnv,
		"custom_auth": "gateway_auth.user_api_key_auth",
	}
	if len(o.ModelRPM) > 0 {
		settings["model_rpm_limit"] = o.ModelRPM
	}
	b, err := json.MarshalIndent(map[string]any{"model_list": list, "general_settings": settings}, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "litellm.json")
	return path, os.WriteFile(path, b, 0o644)
}
