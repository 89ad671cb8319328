package servers

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The recorded logs under testdata/build are real (testdata/build/README says how each
// was made); the CPU is this project's machine, an AVX-512 and AMX Xeon, and a "haswell"
// CPU is its flags less every AVX-512, AMX and AVX-VNNI flag.
func readBuildLog(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "build", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func recordedCPU(t *testing.T) (xeon, haswell map[string]bool) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "build", "cpuinfo-xeon"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	xeon = ParseCPUFlags(f)
	if !xeon["avx512f"] || !xeon["amx_int8"] || !xeon["pni"] {
		t.Fatalf("recorded cpuinfo flags %v lack avx512f, amx_int8 or pni", xeon)
	}
	haswell = map[string]bool{}
	for f := range xeon {
		if !strings.HasPrefix(f, "avx512") && !strings.HasPrefix(f, "amx") && f != "avx_vnni" {
			haswell[f] = true
		}
	}
	return xeon, haswell
}

var ggmlVariantISA = []string{"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2", "AVX512", "AVX512_VBMI", "AVX512_VNNI"}

func TestParseBuild(t *testing.T) {
	for _, tc := range []struct {
		log         string
		wantEngine  string
		wantCPU     []string
		wantLibrary string
	}{
		{"ollama-generic.log", "ollama", nil, ""},
		{"ollama-cpu-variants.log", "ollama", ggmlVariantISA, "libggml-cpu-icelake.so"},
		// A log appended across starts: the newest start's line counts.
		{"ollama-generic.log+ollama-cpu-variants.log", "ollama", ggmlVariantISA, "libggml-cpu-icelake.so"},
		{"ollama-cpu-variants.log+ollama-generic.log", "ollama", nil, ""},
		{"llamacpp-generic.log", "llama.cpp", nil, ""},
		{"llamacpp-cpu-variants.log", "llama.cpp", ggmlVariantISA, "libggml-cpu-icelake.so"},
		{"vllm-serve.log", "vllm", []string{"AVX2", "AVX512", "AVX512_BF16", "AMX_BF16"}, "_C.abi3.so"},
	} {
		t.Run(tc.log, func(t *testing.T) {
			var log []byte
			for _, name := range strings.Split(tc.log, "+") {
				log = append(log, readBuildLog(t, name)...)
			}
			b, ok := ParseBuild(log)
			if !ok || b.Engine != tc.wantEngine || !reflect.DeepEqual(b.CPU, tc.wantCPU) || b.Library != tc.wantLibrary {
				t.Errorf("ParseBuild: ok %v, %s CPU %v library %q; want %s CPU %v library %q",
					ok, b.Engine, b.CPU, b.Library, tc.wantEngine, tc.wantCPU, tc.wantLibrary)
			}
		})
	}
	if b, ok := ParseBuild([]byte("time=… level=INFO msg=\"system memory\" total=\"23.4 GiB\"\nno build here\n")); ok {
		t.Errorf("a log without a build line read as %+v", b)
	}
}

// The note appears when the engine lacks extensions the CPU has, naming the vector levels
// first; a build with everything the CPU has gets none.
func TestBuildNote(t *testing.T) {
	xeon, haswell := recordedCPU(t)
	for _, tc := range []struct {
		name string
		log  string
		cpu  map[string]bool
		want string
	}{
		{"the cgo build alone on the Xeon", "ollama-generic.log", xeon,
			"ollama was built without AVX, AVX2, AVX512 and 10 more extensions this CPU has: its figures understate the engine"},
		{"llama.cpp's generic build on the Xeon", "llamacpp-generic.log", xeon,
			"llama.cpp was built without AVX, AVX2, AVX512 and 10 more extensions this CPU has: its figures understate the engine"},
		{"the generic build on a haswell", "ollama-generic.log", haswell,
			"ollama was built without AVX, AVX2 and 5 more extensions this CPU has: its figures understate the engine"},
		{"the release's variants on the Xeon", "ollama-cpu-variants.log", xeon,
			"ollama was built without AVX_VNNI, AVX512_BF16, AMX_INT8, which this CPU has"},
		{"the release's variants on a haswell", "ollama-cpu-variants.log", haswell, ""},
		{"vLLM's kernels on the Xeon", "vllm-serve.log", xeon, ""},
		{"vLLM's kernels on a haswell", "vllm-serve.log", haswell, ""},
		{"a CPU whose flags cannot be read", "ollama-generic.log", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := ParseBuild(readBuildLog(t, tc.log))
			if !ok {
				t.Fatal("no build line")
			}
			if got := b.Note(tc.cpu); got != tc.want {
				t.Errorf("note %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestEngineBuildString(t *testing.T) {
	for _, tc := range []struct {
		b    EngineBuild
		want string
	}{
		{EngineBuild{Engine: "ollama"}, "ollama CPU (no vector extension)"},
		{EngineBuild{Engine: "ollama", CPU: []string{"AVX", "AVX2"}, Library: "libggml-cpu-haswell.so"}, "ollama CPU AVX AVX2 (libggml-cpu-haswell.so)"},
		{EngineBuild{Engine: "llama.cpp", CPU: []string{"AVX2"}, GPU: []string{"CUDA ARCHS=890 USE_GRAPHS=1"}}, "llama.cpp CPU AVX2; CUDA ARCHS=890 USE_GRAPHS=1"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

// GPU backends are listed with their features; only the CPU's are compared.
func TestParseBuildGPU(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`time=2026-01-01T00:00:00Z level=INFO source=ggml.go:104 msg=system CPU.0.AVX2=1 CPU.1.LLAMAFILE=1 CUDA.0.ARCHS=890 CUDA.0.USE_GRAPHS=1 compiler=cgo(gcc)`,
			[]string{"CUDA.0 ARCHS=890 USE_GRAPHS=1"}},
		{`system_info: n_threads = 2 (n_threads_batch = 2) / 2 | CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : AVX2 = 1 | `,
			[]string{"CUDA ARCHS=890 USE_GRAPHS=1"}},
	} {
		b, ok := ParseBuild([]byte(tc.line))
		if !ok || !reflect.DeepEqual(b.GPU, tc.want) || !reflect.DeepEqual(b.CPU, []string{"AVX2"}) {
			t.Errorf("%s: CPU %v GPU %q, want [AVX2] %q", tc.line, b.CPU, b.GPU, tc.want)
		}
	}
}
