package servers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
)

// EngineBuild is what a server's engine says, as it starts, that its build uses: the CPU
// extensions its kernels were compiled for (the ones it reports at 1) and the GPU backends
// it loaded. The same Ollama binary is 10–34× faster with a CPU library built for AVX2
// and AVX-512 than with its generic one (issue 47), so a row is only read right with the
// build beside it.
type EngineBuild struct {
	// Engine names the log format it was read from: "ollama", "llama.cpp" or "vllm".
	Engine string
	// CPU are the x86 extensions the engine reports, spelt as ggml spells them ("AVX2",
	// "AVX512", "AMX_INT8"), in the order of isaTable.
	CPU []string
	// Library is the CPU library the engine loaded, when it says ("libggml-cpu-icelake.so").
	Library string
	// GPU are the GPU backends it reports, with their features ("CUDA ARCHS=890 USE_GRAPHS=1").
	GPU []string
	// known are the extensions the engine's format can report at all: only those can be
	// said to be missing.
	known []string
}

// String is the build in one line, for the row's engine_build column and the
// manifest: "ollama CPU SSE3 SSSE3 AVX AVX2 … (libggml-cpu-icelake.so)".
func (b EngineBuild) String() string {
	s := b.Engine + " CPU"
	if len(b.CPU) == 0 {
		s += " (no vector extension)"
	} else {
		s += " " + strings.Join(b.CPU, " ")
	}
	if b.Library != "" {
		s += " (" + b.Library + ")"
	}
	for _, g := range b.GPU {
		s += "; " + g
	}
	return s
}

// Missing are the extensions the CPU has (cpuFlags, as /proc/cpuinfo's flags line spells
// them) that the engine could report but does not, in isaTable's order.
func (b EngineBuild) Missing(cpuFlags map[string]bool) []string {
	var out []string
	for _, x := range isaTable {
		if cpuFlags[x.flag] && slices.Contains(b.known, x.name) && !slices.Contains(b.CPU, x.name) {
			out = append(out, x.name)
		}
	}
	return out
}

// Note is the row's note when the engine lacks extensions the CPU has, "" when it lacks
// none. Without a vector level (AVX, AVX2, AVX512) the engine runs far below what it can
// on this CPU: the note names those and counts the rest, to stay short, and says so.
func (b EngineBuild) Note(cpuFlags map[string]bool) string {
	missing := b.Missing(cpuFlags)
	if len(missing) == 0 {
		return ""
	}
	var levels []string
	for _, x := range missing {
		if slices.Contains(vectorLevels, x) {
			levels = append(levels, x)
		}
	}
	if len(levels) == 0 {
		return b.Engine + " was built without " + strings.Join(missing, ", ") + ", which this CPU has"
	}
	n := b.Engine + " was built without " + strings.Join(levels, ", ")
	if more := len(missing) - len(levels); more > 0 {
		n += fmt.Sprintf(" and %d more extensions", more)
	}
	return n + " this CPU has: its figures understate the engine"
}

// vectorLevels are the extensions that set an engine's vector width.
var vectorLevels = []string{"AVX", "AVX2", "AVX512"}

// isaTable maps the extensions engines report to /proc/cpuinfo's flag for each, in the
// order a build lists them. ggml reports AVX512 for its AVX-512 F/CD/VL/DQ/BW set; avx512f
// stands for it here.
var isaTable = []struct{ name, flag string }{
	{"SSE3", "pni"},
	{"SSSE3", "ssse3"},
	{"AVX", "avx"},
	{"AVX_VNNI", "avx_vnni"},
	{"AVX2", "avx2"},
	{"F16C", "f16c"},
	{"FMA", "fma"},
	{"BMI2", "bmi2"},
	{"AVX512", "avx512f"},
	{"AVX512_VBMI", "avx512vbmi"},
	{"AVX512_VNNI", "avx512_vnni"},
	{"AVX512_BF16", "avx512_bf16"},
	{"AMX_INT8", "amx_int8"},
	{"AMX_BF16", "amx_bf16"},
}

// ggmlISA are the x86 extensions ggml's CPU backend reports (ggml_backend_cpu_get_features),
// which Ollama and llama.cpp both print.
var ggmlISA = []string{"SSE3", "SSSE3", "AVX", "AVX_VNNI", "AVX2", "F16C", "FMA", "BMI2",
	"AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AMX_INT8"}

// vllmISA are the extensions scripts/install-vllm.sh's starter reports of vLLM's CPU
// kernels: the library vLLM imports (_C_AVX2, _C_AVX512 or _C, which needs AVX512_BF16)
// and whether torch finds AMX tiles, which vLLM's CPU attention uses for bfloat16.
var vllmISA = []string{"AVX2", "AVX512", "AVX512_BF16", "AMX_BF16"}

// buildFormat is one engine's start-up line: how to find it and read it.
type buildFormat struct {
	engine string
	known  []string
	match  *regexp.Regexp
	parse  func(line string, b *EngineBuild)
}

var buildFormats = []buildFormat{
	// Ollama's slog line after it loads its ggml backends (ml/backend/ggml/ggml/src/ggml.go):
	// msg=system CPU.0.SSE3=1 CPU.0.AVX2=1 … CPU.1.LLAMAFILE=1 compiler=cgo(gcc)
	{"ollama", ggmlISA, regexp.MustCompile(`\bmsg=system\b`), parseOllama},
	// llama.cpp's common_params_get_system_info: system_info: n_threads = 2 … | CPU : SSE3 = 1 | AVX = 1 | … |
	{"llama.cpp", ggmlISA, regexp.MustCompile(`\bsystem_info: `), parseLlamaCpp},
	// scripts/install-vllm.sh's starter: vllm-serve: vLLM CPU kernels _C_AVX512: AVX2=1 AVX512=1 …
	{"vllm", vllmISA, regexp.MustCompile(`^vllm-serve: vLLM CPU kernels `), parseVLLM},
}

// ggmlLoaded is ggml's line for the CPU library it chose ("load_backend: loaded CPU
// backend from /usr/lib/ollama/libggml-cpu-icelake.so").
var ggmlLoaded = regexp.MustCompile(`loaded CPU backend from (\S+)`)

// ParseBuild reads the newest engine build line in a server's log output: the last line
// any format matches, since a log appended across starts (and Ollama's runner, started
// once per model) says it again each time. ok is false when no line matches.
func ParseBuild(log []byte) (b EngineBuild, ok bool) {
	var library string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := ggmlLoaded.FindStringSubmatch(line); m != nil {
			library = path.Base(m[1])
			continue
		}
		for _, f := range buildFormats {
			if f.match.MatchString(line) {
				b = EngineBuild{Engine: f.engine, known: f.known}
				f.parse(line, &b)
				if f.engine != "vllm" {
					// ggml's line, Ollama's and llama.cpp's, comes just before; a start
					// without it loaded none.
					b.Library, library = library, ""
				}
				ok = true
				break
			}
		}
	}
	return b, ok
}

// parseOllama reads slog's NAME.N.FEATURE=VALUE attributes; the CPU's are pooled over
// every CPU backend (CPU.0 is the variant ggml loaded, CPU.1 the cgo build's own).
func parseOllama(line string, b *EngineBuild) {
	gpus := map[string][]string{}
	var order []string
	for _, field := range strings.Fields(line) {
		key, val, ok := strings.Cut(field, "=")
		if !ok {
			continue
		}
		dev, feature, ok := cutDevice(key)
		if !ok {
			continue
		}
		if dev == "CPU" {
			if val == "1" {
				b.CPU = append(b.CPU, feature)
			}
			continue
		}
		if _, seen := gpus[dev]; !seen {
			order = append(order, dev)
		}
		gpus[dev] = append(gpus[dev], feature+"="+val)
	}
	b.CPU = orderISA(b.CPU)
	for _, dev := range order {
		b.GPU = append(b.GPU, dev+" "+strings.Join(gpus[dev], " "))
	}
}

// cutDevice splits "CUDA.0.ARCHS" into "CUDA.0" (a GPU keeps its index; the CPUs pool
// into "CPU") and "ARCHS".
func cutDevice(key string) (dev, feature string, ok bool) {
	name, rest, ok := strings.Cut(key, ".")
	if !ok {
		return "", "", false
	}
	idx, feature, ok := strings.Cut(rest, ".")
	if !ok || idx == "" || strings.Trim(idx, "0123456789") != "" {
		return "", "", false
	}
	if name == "CPU" {
		return name, feature, true
	}
	return name + "." + idx, feature, true
}

// parseLlamaCpp reads "| NAME : FEATURE = VALUE | FEATURE = VALUE |" groups.
func parseLlamaCpp(line string, b *EngineBuild) {
	dev := ""
	var gpu []string
	flush := func() {
		if dev != "" && dev != "CPU" && len(gpu) > 0 {
			b.GPU = append(b.GPU, dev+" "+strings.Join(gpu, " "))
		}
		gpu = nil
	}
	for _, part := range strings.Split(line, "|") {
		if name, rest, ok := strings.Cut(part, " : "); ok {
			flush()
			dev, part = strings.TrimSpace(name), rest
		}
		feature, val, ok := strings.Cut(part, "=")
		if !ok || dev == "" {
			continue
		}
		feature, val = strings.TrimSpace(feature), strings.TrimSpace(val)
		if dev == "CPU" {
			if val == "1" {
				b.CPU = append(b.CPU, feature)
			}
		} else {
			gpu = append(gpu, feature+"="+val)
		}
	}
	flush()
	b.CPU = orderISA(b.CPU)
}

// vllmKernels matches the starter's line: the kernel library, then FEATURE=VALUE pairs.
var vllmKernels = regexp.MustCompile(`vLLM CPU kernels (\S+?):?\s((?:\s*[A-Z0-9_]+=\d)+)`)

func parseVLLM(line string, b *EngineBuild) {
	m := vllmKernels.FindStringSubmatch(line)
	if m == nil {
		return
	}
	b.Library = m[1]
	for _, field := range strings.Fields(m[2]) {
		if feature, val, _ := strings.Cut(field, "="); val == "1" {
			b.CPU = append(b.CPU, feature)
		}
	}
	b.CPU = orderISA(b.CPU)
}

// orderISA keeps the extensions isaTable knows, once each, in its order.
func orderISA(features []string) []string {
	var out []string
	for _, x := range isaTable {
		if slices.Contains(features, x.name) {
			out = append(out, x.name)
		}
	}
	return out
}

// ParseCPUFlags reads the first "flags" line of /proc/cpuinfo into a set; nil when there
// is none (not x86 Linux).
func ParseCPUFlags(r io.Reader) map[string]bool {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "flags" {
			continue
		}
		flags := map[string]bool{}
		for _, f := range strings.Fields(v) {
			flags[f] = true
		}
		return flags
	}
	return nil
}

// CPUFlags are this machine's CPU flags (/proc/cpuinfo); nil where they cannot be read.
func CPUFlags() map[string]bool {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ParseCPUFlags(f)
}

// Build is what the server's engine said of its build since this start (ParseBuild over
// the log from this start's mark); ok is false when it has not said, or not yet (Ollama
// says it once its runner has loaded a model).
func (p *Process) Build() (EngineBuild, bool) {
	f, err := os.Open(p.log.path)
	if err != nil {
		return EngineBuild{}, false
	}
	defer f.Close()
	if _, err := f.Seek(p.from, io.SeekStart); err != nil {
		return EngineBuild{}, false
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return EngineBuild{}, false
	}
	return ParseBuild(b)
}
