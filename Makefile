# Thin wrappers over the scripts; the scripts are the source of truth (CI runs .ci/run).
.PHONY: build install test ollama vllm tinymodel quickstart compare-engines

# build: the planrun CLI in the repository root, stamped with the commit (scripts/build-planrun.sh,
# which the quickstart and compare-engines build with too).
build:
	scripts/build-planrun.sh planrun

# install: the same binary as $(BINDIR)/planrun, so `planrun …` runs as the docs write it.
# /usr/local/bin is on PATH on Debian and most systems; without root: make install BINDIR=~/.local/bin
BINDIR ?= /usr/local/bin
install:
	scripts/build-planrun.sh "$(BINDIR)/planrun"

# test: vet and test everything, integration tests included (builds Ollama the first time).
test:
	scripts/test.sh

# ollama: build the pinned Ollama into .tools/bin (idempotent).
ollama:
	scripts/install-ollama.sh

# vllm: install the pinned vLLM CPU build into .tools/vllm-venv and .tools/bin/vllm-serve (idempotent).
vllm:
	scripts/install-vllm.sh

# tinymodel: write the tiny test model and its Modelfile into .tools/tinymodel.
tinymodel:
	go run ./tools/tinymodel -o .tools/tinymodel

# quickstart: build the pinned Ollama if missing, write the tiny model, let planrun start
# Ollama on a free loopback port, measure native API vs /v1 at concurrency 1 and 4, stop
# it, and print the Markdown table (results under results/quickstart/).
quickstart:
	scripts/quickstart.sh

# compare-engines: Ollama and vLLM on the same tiny weights (a Hugging Face checkpoint both
# load), each started and stopped by planrun, at concurrency 1, 4 and 16, in one table
# (results under results/compare-engines/); fails if an engine process is left.
compare-engines:
	scripts/compare-engines.sh
