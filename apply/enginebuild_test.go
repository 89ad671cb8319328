package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
)

// A server whose engine logs a build without the extensions the CPU has gets the note
// on its rows; one whose build has them gets none. Both rows name their build, and the
// manifest and the report's environment keep it. The logs and the CPU's flags are
// recorded ones (servers/testdata/build).
func TestEngineBuildOnRows(t *testing.T) {
	recorded := func(name string) string {
		p, err := filepath.Abs(filepath.Join("..", "servers", "testdata", "build", name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f, err := os.Open(recorded("cpuinfo-xeon"))
	if err != nil {
		t.Fatal(err)
	}
	xeon := servers.ParseCPUFlags(f)
	f.Close()
	saved := cpuFlags
	cpuFlags = func() map[string]bool { return xeon }
	defer func() { cpuFlags = saved }()

	var src strings.Builder
	for _, s := range []struct{ name, log string }{{"generic", "ollama-generic.log"}, {"kernels", "vllm-serve.log"}} {
		port, err := servers.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&src, `
server %q {
  command = [%q, "-test.run=^$"]
  env = {
    PLANRUN_TEST_MOCK_SERVER = "127.0.0.1:%d"
    PLANRUN_TEST_ENGINE_LOG  = %q
  }
  ready {
    url     = "http://127.0.0.1:%d/health"
    timeout = "20s"
  }
  grace = "2s"
}
backend "openai" %q {
  url    = "http://127.0.0.1:%d/v1"
  server = server.%s
}
`, s.name, os.Args[0], port, recorded(s.log), port, s.name, port, s.name)
	}
	src.WriteString(`
variable "url" { default = "" }
workload "w" {
  prompt      = "a fixed prompt"
  max_tokens  = 4
  concurrency = 1
  requests    = 2
  warmup_runs = 0
  repeat_runs = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.generic, backend.openai.kernels]
  workload = [workload.w]
}
`)
	p, cells := loadPlan(t, src.String(), "")
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	const note = "ollama was built without AVX, AVX2, AVX512 and 10 more extensions this CPU has: its figures understate the engine"
	generic, kernels := res.Rows[0], res.Rows[1]
	if generic.EngineBuild != "ollama CPU (no vector extension)" || !strings.Contains(generic.Notes, note) {
		t.Errorf("the generic build's row: engine_build %q, notes %q; want the note %q", generic.EngineBuild, generic.Notes, note)
	}
	const vllm = "vllm CPU AVX2 AVX512 AVX512_BF16 AMX_BF16 (_C.abi3.so)"
	if kernels.EngineBuild != vllm || strings.Contains(kernels.Notes, "was built without") {
		t.Errorf("vLLM's row: engine_build %q, notes %q; want %q and no build note", kernels.EngineBuild, kernels.Notes, vllm)
	}
	m := readManifest(t, res.RunDir)
	if m.ServerBuilds["openai.generic"] != generic.EngineBuild || m.ServerBuilds["openai.kernels"] != vllm {
		t.Errorf("manifest server_builds %q", m.ServerBuilds)
	}
	md, _ := os.ReadFile(res.ReportPath)
	if !strings.Contains(string(md), "Engine build openai.kernels") || !strings.Contains(string(md), vllm) {
		t.Errorf("report.md does not name the engine builds:\n%s", md)
	}
}
