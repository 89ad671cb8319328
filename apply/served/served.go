// Package served reads what a server says it serves, in its own words: the
// quantization of the model it loaded (a vLLM start-up log, a managed server's
// arguments, a checkpoint's config.json) and the KV cache a vLLM server reserved.
package served

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/servers/cmdline"
)

// Quant is the quantization a server says it serves for a model, and where that
// was read; level is empty when the server does not state it.
type Quant struct {
	Level, Source string
}

// NotStated is the source of a quantization no server figure gives.
const NotStated = "not stated by the server"

// vllmConfigLine matches the engine config vLLM logs as it starts ("... with config:
// model='...', ..., dtype=torch.bfloat16, ..., quantization=None, ...").
var (
	vllmDtype = regexp.MustCompile(`\bdtype=torch\.(\w+)`)
	vllmQuant = regexp.MustCompile(`\bquantization=(\w+)`)
)

// QuantFromLog reads the dtype and quantization method a vLLM server logged at start:
// the one figure that is what its engine really loaded (--dtype auto resolved, a
// float16 checkpoint cast on a CPU that lacks it).
func QuantFromLog(path string) (Quant, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Quant{}, false
	}
	var last string
	for _, line := range strings.Split(string(b), "\n") {
		if vllmDtype.MatchString(line) {
			last = line // the newest start in an appended log
		}
	}
	if last == "" {
		return Quant{}, false
	}
	if q := vllmQuant.FindStringSubmatch(last); q != nil && q[1] != "None" {
		return Quant{q[1], "vLLM start-up log quantization= (" + filepath.Base(path) + ")"}, true
	}
	return Quant{vllmDtype.FindStringSubmatch(last)[1], "vLLM start-up log dtype= (" + filepath.Base(path) + ")"}, true
}

// QuantFromArgs reads --quantization, else --dtype, from a managed server's command,
// as the plan's checks read it (servers/cmdline).
func QuantFromArgs(spec servers.Spec) (Quant, bool) {
	st, ok := cmdline.Read(spec.Command, spec.Env)
	switch {
	case !ok:
		return Quant{}, false
	case st.Quantization != "":
		return Quant{st.Quantization, "server " + spec.Name + "'s --quantization argument"}, true
	case st.Dtype != "":
		return Quant{st.Dtype, "server " + spec.Name + "'s --dtype argument"}, true
	}
	return Quant{}, false
}

// QuantFromConfig reads a checkpoint directory's config.json: quantization_config's
// quant_method, else torch_dtype (or dtype, transformers' newer name).
func QuantFromConfig(dir string) (Quant, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return Quant{}, false
	}
	var c struct {
		Quant *struct {
			Method string `json:"quant_method"`
		} `json:"quantization_config"`
		TorchDtype string `json:"torch_dtype"`
		Dtype      string `json:"dtype"`
	}
	if json.Unmarshal(b, &c) != nil {
		return Quant{}, false
	}
	src := filepath.Join(dir, "config.json")
	switch {
	case c.Quant != nil && c.Quant.Method != "":
		return Quant{c.Quant.Method, src + " quantization_config.quant_method"}, true
	case c.TorchDtype != "":
		return Quant{c.TorchDtype, src + " torch_dtype"}, true
	case c.Dtype != "":
		return Quant{c.Dtype, src + " dtype"}, true
	}
	return Quant{}, false
}

// vLLM's CPU worker logs the KV cache it set aside ("Explicitly set (1.0/20.96) GiB for
// KV cache on node 0") and the engine its size in tokens ("CPU KV cache size: 1,048,576
// tokens").
var (
	vllmKVGiB    = regexp.MustCompile(`set \(([0-9.]+)/[0-9.]+\) GiB for KV cache`)
	vllmKVTokens = regexp.MustCompile(`KV cache size: ([0-9,]+) tokens`)
)

// KVCacheFromLog reads the KV cache a vLLM server reserved from its log: GB, and a note
// with its size in tokens; ok is false when the log says neither.
func KVCacheFromLog(path string) (gb float64, note string, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", false
	}
	gibs := vllmKVGiB.FindAllSubmatch(b, -1)
	if len(gibs) == 0 {
		return 0, "", false
	}
	gib, err := strconv.ParseFloat(string(gibs[len(gibs)-1][1]), 64) // the newest start
	if err != nil {
		return 0, "", false
	}
	note = fmt.Sprintf("vLLM reserved %.2f GiB of KV cache (its start-up log)", gib)
	if toks := vllmKVTokens.FindAllSubmatch(b, -1); len(toks) > 0 {
		note += ", " + string(toks[len(toks)-1][1]) + " tokens"
	}
	return gib * (1 << 30) / 1e9, note, true
}
