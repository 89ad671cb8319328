// Command tinymodel writes the tiny llama GGUF model and its Modelfile that
// planrun's integration tests and quickstart serve with Ollama:
//
//	go run ./tools/tinymodel -o DIR
//	ollama create tiny -f DIR/Modelfile
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/planrun/planrun/internal/tinymodel"
)

func main() {
	cfg := tinymodel.DefaultConfig()
	out := flag.String("o", ".", "directory to write "+tinymodel.GGUFName+" and "+tinymodel.ModelfileName+" into")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed for the random weights (same seed, same bytes)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: tinymodel [-o DIR] [-seed N]\n\n"+
			"Writes a tiny llama-architecture GGUF model with random weights and a Modelfile for `ollama create`.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}

	modelfile, err := tinymodel.WriteDir(*out, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tinymodel:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s and %s\n", filepath.Join(*out, tinymodel.GGUFName), modelfile)
}
