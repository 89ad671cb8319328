package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

func init() {
	register("convert", "turn a seed config.toml into an equivalent plan", runConvert)
}

type convertArgs struct {
	Out  string
	Path string
}

// seedConfig is the benchmark config skeleton users copy (examples/seed-config.toml).
type seedConfig struct {
	Server struct {
		Host    string `toml:"host"`
		Port    int    `toml:"port"`
		APIBase string `toml:"api_base"`
	} `toml:"server"`
	Auth struct {
		APIKeyEnv string `toml:"api_key_env"`
	} `toml:"auth"`
	Model struct {
		Name         string `toml:"name"`
		Quantization string `toml:"quantization"`
		MaxModelLen  int    `toml:"max_model_len"`
	} `toml:"model"`
	Benchmark seedBenchmark `toml:"benchmark"`
	Hardware  struct {
		GPU    string  `toml:"gpu"`
		VRAMGB float64 `toml:"vram_gb"`
		Driver string  `toml:"driver"`
		CUDA   string  `toml:"cuda"`
	} `toml:"hardware"`
}

// seedBenchmark is the seed config's [benchmark]: what a request asks and how it runs.
type seedBenchmark struct {
	MeasureTTFT       *bool `toml:"measure_ttft"`
	MeasureTPOT       *bool `toml:"measure_tpot"`
	MeasureThroughput *bool `toml:"measure_throughput"`
	MeasureVRAM       *bool `toml:"measure_vram"`
	PromptTokens      *int  `toml:"prompt_tokens"`
	MaxTokens         *int  `toml:"max_tokens"`
	Concurrency       any   `toml:"concurrency"` // one level or a list
	WarmupRuns        *int  `toml:"warmup_runs"`
	RepeatRuns        *int  `toml:"repeat_runs"`
}

func runConvert(_ context.Context, env *Env, args []string) int {
	var a convertArgs
	fs := newFlagSet(env, "convert", "CONFIG.toml", "Turn a seed benchmark config (config.toml) into an equivalent plan: one backend,\nhardware and workload, and a one-cell matrix. Prints the plan, or writes it with -o.")
	fs.StringVar(&a.Out, "o", "", "write the plan to this file instead of stdout")
	if code, ok := parseArgs(fs, args, 1, &a.Path); !ok {
		return code
	}
	var cfg seedConfig
	md, err := toml.DecodeFile(a.Path, &cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun convert: %v\n", err)
		return exitError
	}
	for _, k := range md.Undecoded() {
		fmt.Fprintf(env.Stderr, "planrun convert: warning: %s is not carried over\n", k)
	}
	out, err := convertSeed(&cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun convert: %v\n", err)
		return exitError
	}
	if a.Out == "" {
		env.Stdout.Write(out)
		return exitOK
	}
	if err := os.WriteFile(a.Out, out, 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "planrun convert: %v\n", err)
		return exitError
	}
	return exitOK
}

// convertSeed writes the plan for a seed config. The comments carry the meaning of the
// seed's (Chinese) comments over in English.
func convertSeed(cfg *seedConfig) ([]byte, error) {
	kind, name, baseURL, err := seedBackend(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Model.Name == "" {
		return nil, fmt.Errorf("[model] name is missing")
	}
	var w seedPlan
	w.p("# Converted by `planrun convert` from the seed benchmark config skeleton (config.toml).\n")
	w.p("# Run it with: planrun apply <this file>\n\n")
	w.backend(cfg, kind, name, baseURL)
	hwName := w.hardware(cfg)
	if err := w.workload(cfg.Benchmark); err != nil {
		return nil, err
	}
	w.matrix(cfg, kind, name, hwName)
	w.p("output \"csv\" {\n  path = \"results/results.csv\"\n}\n\n")
	w.p("output \"markdown\" {\n  path = \"results/results.md\"\n}\n")
	return hclwrite.Format([]byte(w.String())), nil
}

// seedPlan is the plan convertSeed writes, block by block.
type seedPlan struct{ strings.Builder }

func (w *seedPlan) p(format string, args ...any) { fmt.Fprintf(&w.Builder, format, args...) }

// backend writes the backend block the seed's requests went to.
func (w *seedPlan) backend(cfg *seedConfig, kind, name, baseURL string) {
	w.p("# [server] api_base is the base the seed's script appends /v1/chat/completions to,\n")
	w.p("# so the backend's base URL is api_base + \"/v1\".")
	if cfg.Server.Host != "" || cfg.Server.Port != 0 {
		w.p(" The seed's host = %s and port = %d\n# are where its own server listens; api_base is what the requests go to.", cfg.Server.Host, cfg.Server.Port)
	}
	w.p("\n")
	w.p("backend %q %q {\n", kind, name)
	w.p("  url = %s\n", hclString(baseURL))
	if cfg.Auth.APIKeyEnv != "" {
		w.p("  # [auth] Read the key from the environment, never hard-code it.\n")
		w.p("  api_key_env = %s\n", hclString(cfg.Auth.APIKeyEnv))
	}
	w.p("}\n\n")
}

// hardware writes the hardware block when the seed names a GPU, and returns its name
// ("" for none).
func (w *seedPlan) hardware(cfg *seedConfig) string {
	if cfg.Hardware.GPU == "" {
		return ""
	}
	hwName := slug(cfg.Hardware.GPU, "gpu")
	w.p("hardware %q {\n", hwName)
	w.p("  gpu = %s\n", hclString(cfg.Hardware.GPU))
	if cfg.Hardware.VRAMGB > 0 {
		w.p("  vram_gb = %s\n", formatNumber(cfg.Hardware.VRAMGB))
	}
	placeholder := func(attr, v, what string) {
		if isPlaceholder(v) {
			w.p("  %s = \"\" # record your %s version\n", attr, what)
		} else if v != "" {
			w.p("  %s = %s\n", attr, hclString(v))
		}
	}
	placeholder("driver", cfg.Hardware.Driver, "driver")
	placeholder("cuda", cfg.Hardware.CUDA, "CUDA")
	w.p("}\n\n")
	return hwName
}

// workload writes the workload block of the seed's [benchmark].
func (w *seedPlan) workload(bm seedBenchmark) error {
	w.p("workload \"seed\" {\n")
	w.p("  # The switches for the four core metrics (measure_ttft, measure_tpot, measure_throughput, measure_vram).\n")
	var measure []string
	for _, m := range []struct {
		on   *bool
		name string
	}{{bm.MeasureTTFT, "ttft"}, {bm.MeasureTPOT, "tpot"}, {bm.MeasureThroughput, "throughput"}, {bm.MeasureVRAM, "vram"}} {
		if m.on == nil || *m.on {
			measure = append(measure, fmt.Sprintf("%q", m.name))
		}
	}
	w.p("  measure = [%s]\n", strings.Join(measure, ", "))
	w.p("  # Request parameters must be fixed for results to be reproducible.\n")
	intAttr := func(attr string, v *int, def int, comment string) {
		n := def
		if v != nil {
			n = *v
		}
		w.p("  %s = %d # %s\n", attr, n, comment)
	}
	intAttr("prompt_tokens", bm.PromptTokens, 128, "fixed input length")
	intAttr("max_tokens", bm.MaxTokens, 256, "fixed output length")
	conc, err := concurrencyHCL(bm.Concurrency)
	if err != nil {
		return err
	}
	w.p("  concurrency = %s # concurrent requests; 1 for single requests\n", conc)
	intAttr("warmup_runs", bm.WarmupRuns, 3, "warm-up runs, discarded")
	intAttr("repeat_runs", bm.RepeatRuns, 5, "measured runs; the median is reported")
	w.p("}\n\n")
	return nil
}

// matrix writes the matrix of the seed's one model on its backend, hardware and workload.
func (w *seedPlan) matrix(cfg *seedConfig, kind, name, hwName string) {
	w.p("matrix \"seed\" {\n")
	w.p("  model = [%s]\n", hclString(cfg.Model.Name))
	if cfg.Model.Quantization != "" {
		w.p("  quantization = [%s] # e.g. q4_k_m, fp8, fp16\n", hclString(cfg.Model.Quantization))
	}
	w.p("  tool = [backend.%s.%s]\n", kind, name)
	if hwName != "" {
		w.p("  hardware = [hardware.%s]\n", hwName)
	}
	w.p("  workload = [workload.seed]\n")
	if cfg.Model.MaxModelLen > 0 {
		w.p("  # [model] max_model_len is a server setting; the KV cache (and so VRAM) grows with it.\n")
		w.p("  notes = \"max_model_len %d\"\n", cfg.Model.MaxModelLen)
	}
	w.p("}\n\n")
}

// seedBackend picks the backend kind from api_base: the TaoToken gateway by its host,
// Ollama by its port (its native API has no /v1), any other server as OpenAI-compatible.
func seedBackend(cfg *seedConfig) (kind, name, base string, err error) {
	raw := strings.TrimRight(cfg.Server.APIBase, "/")
	if raw == "" {
		host := cfg.Server.Host
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1" // a listen address, not one to connect to
		}
		port := cfg.Server.Port
		if port == 0 {
			port = 8000
		}
		raw = fmt.Sprintf("http://%s:%d", host, port)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", "", "", fmt.Errorf("[server] api_base %q is not a URL", raw)
	}
	switch {
	case strings.Contains(u.Hostname(), "taotoken"):
		return "taotoken", "gateway", raw + "/v1", nil
	case u.Port() == "11434":
		return "ollama", "local", raw, nil
	default:
		return "openai", "server", raw + "/v1", nil
	}
}

func concurrencyHCL(v any) (string, error) {
	switch c := v.(type) {
	case nil:
		return "1", nil
	case int64:
		return fmt.Sprint(c), nil
	case []any:
		s := make([]string, len(c))
		for i, x := range c {
			n, ok := x.(int64)
			if !ok {
				return "", fmt.Errorf("[benchmark] concurrency must be whole numbers")
			}
			s[i] = fmt.Sprint(n)
		}
		return "[" + strings.Join(s, ", ") + "]", nil
	}
	return "", fmt.Errorf("[benchmark] concurrency must be a number or a list of numbers")
}

// isPlaceholder spots the seed's "记录你的驱动版本" ("record your driver version"): text
// telling the reader to fill the value in is not a value.
func isPlaceholder(s string) bool { return strings.Contains(s, "记录") }

var nonName = regexp.MustCompile(`[^a-z0-9_]+`)

// slug turns "RTX 4060" into "rtx-4060", a name a plan can reference.
func slug(s, fallback string) string {
	n := strings.Trim(nonName.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if n != "" && !hclsyntax.ValidIdentifier(n) {
		n = fallback + "-" + n
	}
	if !hclsyntax.ValidIdentifier(n) {
		return fallback
	}
	return n
}

func hclString(s string) string {
	return string(hclwrite.TokensForValue(cty.StringVal(s)).Bytes())
}

func formatNumber(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}
