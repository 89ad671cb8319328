// Command tinymodel writes the tiny llama GGUF model and its Modelfile that
// planrun's integration tests and quickstart serve with Ollama:
//
//	go run ./tools/tinymodel -o DIR
//	ollama create tiny -f DIR/Modelfile
//
// With -hf it writes a Hugging Face-layout Llama checkpoint instead, which vLLM serves
// and Ollama imports, so both engines run the same weights:
//
//	go run ./tools/tinymodel -hf -o DIR
//	vllm serve DIR
//	ollama create tiny-hf -f DIR/Modelfile
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/planrun/planrun/internal/tinymodel"
)

func main() {
	hf := flag.Bool("hf", false, "write a Hugging Face-layout checkpoint (safetensors, tokenizer.json) for vLLM and `ollama create`")
	out := flag.String("o", ".", "directory to write "+tinymodel.GGUFName+" and "+tinymodel.ModelfileName+" into")
	seed := flag.Uint64("seed", tinymodel.DefaultConfig().Seed, "seed for the random weights (same seed, same bytes)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: tinymodel [-hf] [-o DIR] [-seed N]\n\n"+
			"Writes a tiny llama-architecture GGUF model with random weights and a Modelfile for `ollama create`,\n"+
			"or with -hf the same kind of model as a Hugging Face checkpoint that vLLM and Ollama both load.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}

	cfg := tinymodel.DefaultConfig()
	if *hf {
		cfg = tinymodel.HFConfig()
	}
	cfg.Seed = *seed
	if *hf {
		if err := tinymodel.WriteHFDir(*out, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "tinymodel:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote a Hugging Face checkpoint and %s into %s\n", tinymodel.HFModelfileName, *out)
		return
	}
	modelfile, err := tinymodel.WriteDir(*out, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tinymodel:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s and %s\n", filepath.Join(*out, tinymodel.GGUFName), modelfile)
}
