//go:build ignore

// generate writes examples/data/prompts.jsonl: seeded, made-up questions with an
// expected answer length, so examples/datasets.hcl has a dataset nothing was copied into.
// Run it from the repository root: go run examples/data/generate.go
package main

import (
	"bufio"
	"encoding/json"
	"log"
	"math/rand/v2"
	"os"
	"strings"
)

var (
	asks     = []string{"Explain", "Summarise", "Compare", "Describe", "List the steps of", "Give three facts about"}
	subjects = []string{"a GPU's memory hierarchy", "how a tokenizer splits words", "batching in an inference server",
		"prefix caching", "the KV cache", "quantization to four bits", "speculative decoding", "a load balancer",
		"tail latency", "a Poisson arrival process", "warm-up runs in a benchmark", "paged attention"}
	tails = []string{"for a newcomer", "in plain words", "with an example", "and say why it matters", "briefly", ""}
	pad   = strings.Fields("please keep the answer focused on what an engineer running a benchmark on their own card would want to know")
)

func main() {
	rng := rand.New(rand.NewPCG(13, 2026))
	f, err := os.Create("examples/data/prompts.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for range 200 {
		words := []string{asks[rng.IntN(len(asks))], subjects[rng.IntN(len(subjects))], tails[rng.IntN(len(tails))]}
		words = append(words, pad[:rng.IntN(len(pad)+1)]...)
		prompt := strings.Join(strings.Fields(strings.Join(words, " ")), " ") + "."
		if err := enc.Encode(map[string]any{"prompt": prompt, "output_tokens": 16 + rng.IntN(113)}); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()
}
