//go:build ignore

// generate_trace writes examples/data/trace.jsonl: a seeded, made-up Mooncake trace
// (timestamp in ms, input_length, output_length, hash_ids), so examples/trace-replay.hcl
// replays a trace nothing was copied into. Arrivals are Poisson at about 4 requests/s;
// prompts are built of 64-token prefix blocks, and a few shared "system prompts" make
// rows share their first blocks, as real traffic does.
// Run it from the repository root: go run examples/data/generate_trace.go
package main

import (
	"bufio"
	"encoding/json"
	"log"
	"math"
	"math/rand/v2"
	"os"
)

const (
	rows      = 240
	ratePerS  = 4.0
	blockSize = 64
)

func main() {
	rng := rand.New(rand.NewPCG(13, 5))
	f, err := os.Create("examples/data/trace.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	var t float64
	next := int64(1000) // ids of blocks no other row shares
	for range rows {
		t += rng.ExpFloat64() * 1000 / ratePerS
		in := min(2048, max(32, int(math.Exp(rng.NormFloat64()*0.6+math.Log(300)))))
		out := min(256, max(4, int(math.Exp(rng.NormFloat64()*0.5+math.Log(48)))))
		system := int64(rng.IntN(3)) * 100 // one of three shared prefixes, two blocks each
		ids := []int64{system, system + 1}
		for len(ids)*blockSize < in {
			ids = append(ids, next)
			next++
		}
		row := map[string]any{"timestamp": int64(t), "input_length": in, "output_length": out, "hash_ids": ids}
		if err := enc.Encode(row); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()
}
