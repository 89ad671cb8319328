package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/serverstats"
)

func init() {
	register("estimate", "estimate a model's VRAM (weights + KV cache + overhead) without running it", runEstimate)
}

// estimateArgs are `planrun estimate`'s flags. Shapes given on the command line win over
// those read from Ollama.
type estimateArgs struct {
	Params      string
	Quant       string
	Layers      int
	KVHeads     int
	HeadDim     int
	Context     int
	Concurrency int
	KVBytes     string
	OverheadGiB float64
	OllamaURL   string
	Model       string
	JSON        bool
}

func parseEstimate(args []string, stderr io.Writer) (*estimateArgs, error) {
	a := &estimateArgs{}
	fs := newUsageFlagSet(stderr, "estimate", `Usage: planrun estimate -params 7B -quant q4_K_M [-layers N -kv-heads N -head-dim N] [flags]
       planrun estimate -ollama http://127.0.0.1:11434 -model qwen2.5:7b [flags]

VRAM ≈ parameters × bits/8 + layers × kv heads × head dim × 2 × kv bytes × context × concurrency + overhead.

`)
	fs.StringVar(&a.Params, "params", "", "parameter count: 7e9, 7B, 770M")
	fs.StringVar(&a.Quant, "quant", "", "quantization: q4_0, q4_K_M, q8_0, fp8, fp16, bf16, awq, ... (from Ollama when -ollama is set)")
	fs.IntVar(&a.Layers, "layers", 0, "transformer layers (block_count)")
	fs.IntVar(&a.KVHeads, "kv-heads", 0, "key/value heads (head_count_kv)")
	fs.IntVar(&a.HeadDim, "head-dim", 0, "head dimension (embedding_length / head_count)")
	fs.IntVar(&a.Context, "context", 8192, "tokens per sequence in the KV cache (num_ctx, max_model_len)")
	fs.IntVar(&a.Concurrency, "concurrency", 1, "sequences at once (num_parallel, concurrent requests)")
	fs.StringVar(&a.KVBytes, "kv-bytes", "f16", "bytes per KV element, or a cache type: f16, fp8, q8_0, q4_0")
	fs.Float64Var(&a.OverheadGiB, "overhead", 0, "runtime overhead in GiB (0: 1 GiB, CUDA context and compute buffers)")
	fs.StringVar(&a.OllamaURL, "ollama", "", "read the model's shape from this Ollama server's /api/show")
	fs.StringVar(&a.Model, "model", "", "the model name for -ollama")
	fs.BoolVar(&a.JSON, "json", false, "print the estimate as JSON")
	operands, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(operands) > 0 {
		return nil, fmt.Errorf("estimate takes no arguments, got %q", operands)
	}
	if (a.OllamaURL == "") != (a.Model == "") {
		return nil, errors.New("-ollama and -model go together")
	}
	if a.OllamaURL == "" && a.Params == "" {
		return nil, errors.New("give -params (and -quant), or -ollama URL -model NAME")
	}
	if a.Context < 0 || a.Concurrency < 1 || a.OverheadGiB < 0 {
		return nil, errors.New("-context must be ≥ 0, -concurrency ≥ 1, -overhead ≥ 0")
	}
	return a, nil
}

func runEstimate(ctx context.Context, env *Env, args []string) int {
	a, err := parseEstimate(args, env.Stderr)
	if err != nil {
		return usageExit(env, "estimate", err)
	}
	in := gpu.EstimateInput{Quant: a.Quant, Context: a.Context, Concurrency: a.Concurrency, Overhead: a.OverheadGiB * (1 << 30)}
	if a.OllamaURL != "" {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		shape, quant, err := ollamaShape(ctx, a.OllamaURL, a.Model)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun estimate: %v\n", err)
			return exitError
		}
		in.Shape = shape
		if in.Quant == "" {
			in.Quant = quant
		}
	}
	if a.Params != "" {
		if in.Shape.Params, err = gpu.ParseParams(a.Params); err != nil {
			fmt.Fprintf(env.Stderr, "planrun estimate: %v\n", err)
			return exitUsage
		}
	}
	for _, f := range []struct {
		dst *int
		v   int
	}{{&in.Shape.Layers, a.Layers}, {&in.Shape.KVHeads, a.KVHeads}, {&in.Shape.HeadDim, a.HeadDim}} {
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	if in.KVBytes, err = gpu.KVBytes(a.KVBytes); err != nil {
		fmt.Fprintf(env.Stderr, "planrun estimate: %v\n", err)
		return exitUsage
	}
	est, err := gpu.Estimate(in)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun estimate: %v\n", err)
		return exitUsage
	}
	if a.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(est); err != nil {
			return exitError
		}
		return exitOK
	}
	if a.Model != "" {
		fmt.Fprintf(env.Stdout, "%s (%s, from %s /api/show)\n", a.Model, in.Shape.Arch, a.OllamaURL)
	}
	if err := est.WriteText(env.Stdout); err != nil {
		return exitError
	}
	return exitOK
}

// ollamaShape reads the model's shape and quantization from the Ollama at url (its
// /api/show), through the Ollama adapter as a plan's backend block builds it.
func ollamaShape(ctx context.Context, url, model string) (gpu.ModelShape, string, error) {
	b, err := connect.New(backends.Config{Kind: "ollama", Name: "ollama", URL: url}, backends.WithHTTPClient(&http.Client{}))
	if err != nil {
		return gpu.ModelShape{}, "", err
	}
	show, ok := b.(backends.ModelShower)
	if !ok {
		return gpu.ModelShape{}, "", fmt.Errorf("backend %s cannot describe its models", b.Name())
	}
	return serverstats.ModelShape(ctx, show, model)
}
