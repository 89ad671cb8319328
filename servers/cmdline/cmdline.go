// Package cmdline reads what an inference server's command line states: the model it
// loads and the names it serves it by, its dtype and quantization, the port it listens
// on, its LoRA adapters, prefix caching and longest sequence. One small table per
// engine (vLLM, SGLang, llama.cpp's llama-server, Ollama, LiteLLM, planrun's mock
// server) maps each flag to what it states, so plan can hold a managed server's command
// against the cells it serves before anything starts, and apply reads the same figures.
package cmdline

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// Stated is what a server's command line (and environment) says about the server.
type Stated struct {
	// Engine names the engine that read it: "vllm", "sglang", "llama.cpp", "ollama",
	// "litellm" or "mock-server".
	Engine string
	// Model is the model it loads (vllm serve MODEL, --model, -m), "" when not given.
	Model string
	// Served are the names it serves the model by; Model when none is given.
	Served []string
	// StrictNames: the engine refuses a request for a model name it does not serve.
	StrictNames bool
	// Dtype and Quantization are as given; "" when not given or "auto".
	Dtype, Quantization string
	// Host is the address it listens on, as given ("" when not given).
	Host string
	// Port is the port it listens on, given or the engine's default (0: unknown).
	Port int
	// PortFrom says where Port was read: a flag, an environment variable, or "the
	// default".
	PortFrom string
	// LoRA: adapters may be served (--enable-lora); Adapters are those it names.
	LoRA     bool
	Adapters []string
	// NoPrefixCache: prefix caching is turned off.
	NoPrefixCache bool
	// MaxModelLen is the longest sequence it takes (0: not given), MaxModelLenText as
	// written ("2k").
	MaxModelLen     int
	MaxModelLenText string
	// TensorParallel is the GPUs one replica spans (0: not given).
	TensorParallel int
	// Wrapper: the program is a script named after the engine (run-vllm.sh), which may
	// add flags of its own, so no default is assumed: Port is only a port given.
	Wrapper bool
}

// setter applies a flag's values to what is stated.
type setter func(s *Stated, vals []string)

// flag is one of an engine's flags: its spellings, whether it takes no value (a
// switch), one, or several (until the next flag), and what it states.
type flag struct {
	names []string
	arity arity
	set   setter
}

type arity int

const (
	none arity = iota // a switch: --enable-lora, or --enable-lora=false
	one
	many
)

// engine is one engine's table.
type engine struct {
	name string
	// args are the arguments after the program (and its subcommand), ok when the
	// command line is this engine's.
	args  func(cmd []string) ([]string, bool)
	flags []flag
	// modelFirst: a first argument that is no flag is the model (vllm serve MODEL).
	modelFirst bool
	// exact reports whether the program is the engine's own (or a wrapper known to
	// pass its arguments through), not only named after it; nil: always.
	exact       func(cmd []string) bool
	defaultPort int
	strictNames bool
	env         func(s *Stated, env map[string]string)
}

// Read reads a command line with its environment; ok is false when no engine in the
// table recognises it (a shell, a script): nothing is then stated.
func Read(cmd []string, env map[string]string) (Stated, bool) {
	for _, e := range engines {
		args, ok := e.args(cmd)
		if !ok {
			continue
		}
		s := Stated{Engine: e.name, StrictNames: e.strictNames, Wrapper: e.exact != nil && !e.exact(cmd)}
		if e.defaultPort > 0 && !s.Wrapper {
			s.Port, s.PortFrom = e.defaultPort, "the default"
		}
		if e.env != nil {
			e.env(&s, env)
		}
		e.read(&s, args)
		if len(s.Served) == 0 && s.Model != "" {
			s.Served = []string{s.Model}
		}
		return s, true
	}
	return Stated{}, false
}

// read applies args to s: each flag as --flag=v or --flag v (several values for a
// flag that takes them); the arguments of flags it does not know are skipped.
func (e engine) read(s *Stated, args []string) {
	if e.modelFirst && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		s.Model, args = args[0], args[1:]
	}
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		f, known := e.lookup(name)
		if !known {
			continue
		}
		var vals []string
		switch {
		case hasVal:
			vals = []string{val}
		case f.arity == one && i+1 < len(args):
			i++
			vals = []string{args[i]}
		case f.arity == many:
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				vals = append(vals, args[i])
			}
		}
		f.set(s, vals)
	}
}

func (e engine) lookup(name string) (flag, bool) {
	for _, f := range e.flags {
		for _, n := range f.names {
			if n == name {
				return f, true
			}
		}
	}
	return flag{}, false
}

// Setters shared by the engines.
func model(s *Stated, v []string)  { s.Model = first(v) }
func served(s *Stated, v []string) { s.Served = append(s.Served, v...) }
func dtype(s *Stated, v []string)  { s.Dtype = notAuto(first(v)) }
func quant(s *Stated, v []string)  { s.Quantization = notAuto(first(v)) }
func host(s *Stated, v []string)   { s.Host = first(v) }
func maxLen(s *Stated, v []string) {
	s.MaxModelLenText = first(v)
	s.MaxModelLen = ParseTokens(s.MaxModelLenText)
}
func port(flagName string) setter {
	return func(s *Stated, v []string) {
		if p, err := strconv.Atoi(first(v)); err == nil {
			s.Port, s.PortFrom = p, flagName
		}
	}
}
func tensorParallel(s *Stated, v []string) { s.TensorParallel, _ = strconv.Atoi(first(v)) }
func switchOn(dst func(*Stated) *bool, on bool) setter {
	return func(s *Stated, v []string) {
		val := len(v) == 0 || v[0] == "true" || v[0] == "1"
		*dst(s) = val == on
	}
}
func lora(s *Stated) *bool          { return &s.LoRA }
func noPrefixCache(s *Stated) *bool { return &s.NoPrefixCache }

// loraModules reads vLLM's --lora-modules: NAME=PATH, or the JSON form
// {"name": "sql", "path": "..."}.
func loraModules(s *Stated, v []string) {
	for _, m := range v {
		if n, _, ok := strings.Cut(m, "="); ok && !strings.HasPrefix(strings.TrimSpace(m), "{") {
			s.Adapters = append(s.Adapters, n)
		} else if j := strings.Index(m, `"name"`); j >= 0 {
			rest := strings.TrimLeft(m[j+len(`"name"`):], ` :`)
			if n, err := strconv.QuotedPrefix(rest); err == nil {
				s.Adapters = append(s.Adapters, strings.Trim(n, `"`))
			}
		}
	}
}

// listenAddress reads a host:port address (-addr of the mock server, OLLAMA_HOST),
// with or without a scheme; a bare host keeps the default port.
func listenAddress(from string) setter {
	return func(s *Stated, v []string) {
		addr := first(v)
		if i := strings.Index(addr, "://"); i >= 0 {
			addr = addr[i+3:]
		}
		addr = strings.TrimRight(addr, "/")
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			s.Host = addr
			return
		}
		s.Host = h
		if n, err := strconv.Atoi(p); err == nil {
			s.Port, s.PortFrom = n, from
		}
	}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func notAuto(v string) string {
	if v == "auto" {
		return ""
	}
	return v
}

// program is the program's base name, without a version or extension suffix.
func program(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	return filepath.Base(cmd[0])
}

// ParseTokens reads a token count as vLLM takes it: "4096", "4k", "1K" (×1000), "1m";
// 0 when it is none.
func ParseTokens(s string) int {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1000, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mult, s = 1000000, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0
	}
	return n * mult
}
