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
//
// With -large it writes a model of about 25 million parameters instead, whose weights
// dominate the server's memory; Ollama makes its quantizations from this one F32 file:
//
//	go run ./tools/tinymodel -large -o DIR
//	ollama create tiny-q4_K_M --quantize q4_K_M -f DIR/Modelfile
//
// With -lora it writes a PEFT LoRA adapter of that checkpoint (rank 8 on q_proj and
// v_proj, seeded by -seed), which vLLM serves beside the base model:
//
//	go run ./tools/tinymodel -lora -seed 2 -o A
//	vllm serve DIR --enable-lora --lora-modules tiny-lora-a=A --max-lora-rank 8
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/planrun/planrun/internal/tinymodel"
)

func main() {
	lora := flag.Bool("lora", false, "write a PEFT LoRA adapter (adapter_config.json, adapter_model.safetensors) of the -hf checkpoint")
	hf := flag.Bool("hf", false, "write a Hugging Face-layout checkpoint (safetensors, tokenizer.json) for vLLM and `ollama create`")
	out := flag.String("o", ".", "directory to write "+tinymodel.GGUFName+" and "+tinymodel.ModelfileName+" into")
	large := flag.Bool("large", false, "write the larger GGUF (about 25M parameters, rows multiples of 256) that Ollama quantizes to Q8_0 and Q4_K_M")
	seed := flag.Uint64("seed", tinymodel.DefaultConfig().Seed, "seed for the random weights (same seed, same bytes)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: tinymodel [-large | -hf | -lora] [-o DIR] [-seed N]\n\n"+
			"Writes a tiny llama-architecture GGUF model with random weights and a Modelfile for `ollama create`,\n"+
			"or with -hf the same kind of model as a Hugging Face checkpoint that vLLM and Ollama both load,\n"+
			"or with -lora a LoRA adapter of that checkpoint for vLLM's --lora-modules.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}

	if *lora {
		if err := tinymodel.WriteLoRADir(*out, tinymodel.HFConfig(), tinymodel.DefaultLoRA(*seed)); err != nil {
			fmt.Fprintln(os.Stderr, "tinymodel:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote a LoRA adapter (%s, %s) into %s\n", tinymodel.LoRAConfigName, tinymodel.LoRAWeightsName, *out)
		return
	}
	cfg := tinymodel.DefaultConfig()
	if *large {
		cfg = tinymodel.LargeConfig()
	}
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
