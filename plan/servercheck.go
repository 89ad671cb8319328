package plan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/load/dataset"
)

// vllmFlags is what a plan-managed vLLM's command line says about what it can serve:
// the names it serves the base model by, its LoRA adapters, prefix caching and the
// longest sequence it takes.
type vllmFlags struct {
	served       []string // --served-model-name, else --model or the model after "serve"
	lora         bool     // --enable-lora
	adapters     []string // the names of --lora-modules
	noPrefix     bool     // --no-enable-prefix-caching
	maxModelLen  int      // --max-model-len; 0 when not given
	maxLenString string
}

// parseVLLM reads a vLLM command line; ok is false when the command is not vLLM's
// (vllm serve, a vllm-serve wrapper, python -m vllm.entrypoints.openai.api_server).
func parseVLLM(cmd []string) (f vllmFlags, ok bool) {
	if len(cmd) == 0 {
		return f, false
	}
	for i, a := range cmd {
		if i == 0 && strings.Contains(filepath.Base(a), "vllm") || strings.HasPrefix(a, "vllm.entrypoints") {
			ok = true
		}
	}
	if !ok {
		return f, false
	}
	args := cmd[1:]
	var model string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		next := func() string { // the flag's value, as --flag=v or --flag v
			if hasVal {
				return val
			}
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				return args[i]
			}
			return ""
		}
		switch name {
		case "serve":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				model = args[i]
			}
		case "--model":
			model = next()
		case "--served-model-name":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !hasVal {
				i++
				f.served = append(f.served, args[i])
			}
			if hasVal {
				f.served = append(f.served, val)
			}
		case "--enable-lora":
			f.lora = !hasVal || val == "true"
		case "--lora-modules":
			mods := []string{}
			if hasVal {
				mods = append(mods, val)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !hasVal {
				i++
				mods = append(mods, args[i])
			}
			for _, m := range mods {
				if n, _, ok := strings.Cut(m, "="); ok {
					f.adapters = append(f.adapters, n)
				} else if j := strings.Index(m, `"name"`); j >= 0 { // the JSON form
					rest := strings.TrimLeft(m[j+len(`"name"`):], ` :`)
					if n, err := strconv.QuotedPrefix(rest); err == nil {
						f.adapters = append(f.adapters, strings.Trim(n, `"`))
					}
				}
			}
		case "--no-enable-prefix-caching":
			f.noPrefix = true
		case "--enable-prefix-caching":
			f.noPrefix = hasVal && val == "false"
		case "--max-model-len":
			f.maxLenString = next()
			f.maxModelLen = parseTokens(f.maxLenString)
		}
	}
	if len(f.served) == 0 && model != "" {
		f.served = []string{model}
	}
	return f, true
}

// parseTokens reads a token count as vLLM takes it: "4096", "4k", "1K" (×1000), "1m".
func parseTokens(s string) int {
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

// longest is the longest a length can draw, 0 when it is not known before the run (a
// dataset's rows).
func longest(l dataset.Length) int {
	switch l.Kind {
	case dataset.LengthFixed:
		return l.Value
	case dataset.LengthDataset:
		return 0
	}
	return l.Max
}

// checkServerCommands holds each plan-managed vLLM's command line against what its
// cells need from it: errors where the server certainly refuses the requests (a model
// of a LoRA mix it cannot serve, requests longer than --max-model-len), warnings where
// it is a judgement (prefix caching turned off under a workload built to share
// prefixes; an adapter not in --lora-modules, which may be loaded at run time). Each
// problem is said once per server and workload, on the server's command.
func checkServerCommands(cells []*Cell) hcl.Diagnostics {
	// One finding per problem and server, naming every workload it applies to: the
	// subject is the server's command, so two findings there would read as one.
	type finding struct {
		diag    *hcl.Diagnostic
		clauses []string
		tail    string
	}
	var order []*finding
	found := map[string]*finding{}
	said := map[string]bool{}
	say := func(sev hcl.DiagnosticSeverity, s *Server, w *Workload, summary, clause, tail string) {
		k := summary + "\x00" + s.Name
		if said[k+"\x00"+w.Name] {
			return
		}
		said[k+"\x00"+w.Name] = true
		f := found[k]
		if f == nil {
			f = &finding{diag: &hcl.Diagnostic{Severity: sev, Summary: summary, Subject: s.commandAt.Ptr()}, tail: tail}
			found[k] = f
			order = append(order, f)
		}
		f.clauses = append(f.clauses, clause)
	}
	for _, c := range cells {
		s, w := c.Server, c.Workload
		if s == nil || w == nil {
			continue
		}
		f, ok := parseVLLM(s.Command)
		if !ok {
			continue
		}
		var missing []string
		for _, m := range w.Models {
			if !slices.Contains(f.served, m.Name) && !slices.Contains(f.adapters, m.Name) {
				missing = append(missing, m.Name)
			}
		}
		switch {
		case len(missing) > 0 && !f.lora && (len(f.served) > 0 || len(w.Models) > 1):
			say(hcl.DiagError, s, w, "Server cannot serve the model mix",
				fmt.Sprintf("workload %q sends requests to %s", w.Name, quoteList(missing)),
				fmt.Sprintf(", but server %q serves %s and has no --enable-lora, so vLLM refuses them. Add \"--enable-lora\" and \"--lora-modules\", \"NAME=PATH\", … to its command.", s.Name, servedText(f)))
		case len(missing) > 0 && f.lora:
			say(hcl.DiagWarning, s, w, "Adapter not in --lora-modules",
				fmt.Sprintf("workload %q sends requests to %s", w.Name, quoteList(missing)),
				fmt.Sprintf(", which server %q does not name in --lora-modules; they fail unless the adapter is loaded at run time (/v1/load_lora_adapter).", s.Name))
		}
		if f.noPrefix && (w.Prefix != nil || w.SharedPrefix) {
			what := "a prefix block"
			if w.Prefix == nil {
				what = "shared_prefix = true"
			}
			say(hcl.DiagWarning, s, w, "Prefix caching is off",
				fmt.Sprintf("workload %q has %s", w.Name, what),
				fmt.Sprintf(", built for a server that reuses shared prefixes, but server %q runs with --no-enable-prefix-caching: its rows will measure no cache hits.", s.Name))
		}
		if f.maxModelLen > 0 {
			in, out := longest(w.PromptLength), longest(w.OutputLength)
			if e := w.Embeddings; e != nil {
				in, out = slices.Max(e.InputTokens), 0
			}
			if in > 0 && in+out > f.maxModelLen {
				say(hcl.DiagError, s, w, "Requests longer than --max-model-len",
					fmt.Sprintf("workload %q asks for up to %d prompt + %d output tokens", w.Name, in, out),
					fmt.Sprintf(", but server %q runs with --max-model-len %s, so vLLM refuses them. Raise --max-model-len or shorten the workload.", s.Name, f.maxLenString))
			} else if w.Session != nil && w.Session.Turns > 1 && in+out > 0 && w.Session.Turns*(in+out) > f.maxModelLen {
				say(hcl.DiagWarning, s, w, "Sessions may outgrow --max-model-len",
					fmt.Sprintf("each turn of workload %q carries the history: %d turns of up to %d tokens reach %d", w.Name, w.Session.Turns, in+out, w.Session.Turns*(in+out)),
					fmt.Sprintf(", past server %q's --max-model-len %s, so the late turns may be refused.", s.Name, f.maxLenString))
			}
		}
	}
	var diags hcl.Diagnostics
	for _, f := range order {
		text := strings.Join(f.clauses, "; ")
		f.diag.Detail = strings.ToUpper(text[:1]) + text[1:] + f.tail
		diags = append(diags, f.diag)
	}
	return diags
}

func servedText(f vllmFlags) string {
	if len(f.served) == 0 {
		return "one model"
	}
	return "only " + quoteList(f.served)
}
