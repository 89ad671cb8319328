package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/servers/cmdline"
)

// servedQuant is the quantization a server says it serves for a model, and where that
// was read; level is empty when the server does not state it.
type servedQuant struct {
	level, source string
}

// notStated is the source of a quantization no server figure gives.
const notStated = "not stated by the server"

// checkQuantization reads what the server really serves for the cell's model and fails
// the cell when the plan declares another quantization, naming both. It runs before the
// probe (whose test request is the first generation request a server sees), where
// /api/show, a managed server's log and its arguments can answer, and again after it
// (probed), when /v1/models' root names the checkpoint whose config.json may. What it
// read is kept for the rows (setServedQuant).
func (a *applier) checkQuantization(ctx context.Context, cell *plan.Cell, setup *cellSetup, probed bool) error {
	key := backendKey(cell) + " " + cell.ModelID
	sq, ok := a.served[key]
	if !ok {
		sq = a.readServedQuant(ctx, cell, setup, probed)
		if sq.level == "" && !probed {
			return nil // the checkpoint's config may say, once the probe has named it
		}
		a.served[key] = sq
	}
	if sq.level == "" || cell.Quantization == "" || plan.SameQuantization(cell.Quantization, sq.level) {
		return nil
	}
	return fmt.Errorf("the plan declares quantization %q for model %q, but the server serves %s (%s): "+
		"no request of the cell was sent; fix the matrix's quantization or the model the server is given",
		cell.Quantization, cell.ModelID, sq.level, sq.source)
}

// readServedQuant asks, in order: a server that describes its models (Ollama's
// /api/show), the log of a vLLM server planrun started (its engine config line), that
// server's own --quantization and --dtype arguments, and the checkpoint config.json
// behind /v1/models' root.
func (a *applier) readServedQuant(ctx context.Context, cell *plan.Cell, setup *cellSetup, probed bool) servedQuant {
	if shower, ok := setup.backend.(backends.ModelShower); ok {
		sctx, cancel := context.WithTimeout(ctx, showTimeout)
		d, err := shower.ShowModel(sctx, cell.ModelID)
		cancel()
		if err == nil && d.QuantizationLevel != "" {
			src := "ollama /api/show details.quantization_level"
			if ft, ok := d.Info["general.file_type"]; ok {
				src += fmt.Sprintf(", GGUF general.file_type %v", ft)
			}
			return servedQuant{d.QuantizationLevel, src}
		}
	}
	if setup.proc != nil {
		if sq, ok := quantFromLog(setup.proc.LogPath()); ok {
			return sq
		}
		if sq, ok := quantFromArgs(setup.proc.Spec()); ok {
			return sq
		}
	}
	if root := a.rec.root(cell.Backend.Addr + " " + cell.ModelID); probed && root != "" && (cell.Server != nil || loopback(cell.Backend.URL)) {
		if sq, ok := quantFromConfig(root); ok {
			return sq
		}
	}
	return servedQuant{source: notStated}
}

// vllmConfigLine matches the engine config vLLM logs as it starts ("... with config:
// model='...', ..., dtype=torch.bfloat16, ..., quantization=None, ...").
var (
	vllmDtype = regexp.MustCompile(`\bdtype=torch\.(\w+)`)
	vllmQuant = regexp.MustCompile(`\bquantization=(\w+)`)
)

// quantFromLog reads the dtype and quantization method a vLLM server logged at start:
// the one figure that is what its engine really loaded (--dtype auto resolved, a
// float16 checkpoint cast on a CPU that lacks it).
func quantFromLog(path string) (servedQuant, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return servedQuant{}, false
	}
	var last string
	for _, line := range strings.Split(string(b), "\n") {
		if vllmDtype.MatchString(line) {
			last = line // the newest start in an appended log
		}
	}
	if last == "" {
		return servedQuant{}, false
	}
	if q := vllmQuant.FindStringSubmatch(last); q != nil && q[1] != "None" {
		return servedQuant{q[1], "vLLM start-up log quantization= (" + filepath.Base(path) + ")"}, true
	}
	return servedQuant{vllmDtype.FindStringSubmatch(last)[1], "vLLM start-up log dtype= (" + filepath.Base(path) + ")"}, true
}

// quantFromArgs reads --quantization, else --dtype, from a managed server's command,
// as the plan's checks read it (servers/cmdline).
func quantFromArgs(spec servers.Spec) (servedQuant, bool) {
	st, ok := cmdline.Read(spec.Command, spec.Env)
	switch {
	case !ok:
		return servedQuant{}, false
	case st.Quantization != "":
		return servedQuant{st.Quantization, "server " + spec.Name + "'s --quantization argument"}, true
	case st.Dtype != "":
		return servedQuant{st.Dtype, "server " + spec.Name + "'s --dtype argument"}, true
	}
	return servedQuant{}, false
}

// quantFromConfig reads a checkpoint directory's config.json: quantization_config's
// quant_method, else torch_dtype (or dtype, transformers' newer name).
func quantFromConfig(dir string) (servedQuant, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return servedQuant{}, false
	}
	var c struct {
		Quant *struct {
			Method string `json:"quant_method"`
		} `json:"quantization_config"`
		TorchDtype string `json:"torch_dtype"`
		Dtype      string `json:"dtype"`
	}
	if json.Unmarshal(b, &c) != nil {
		return servedQuant{}, false
	}
	src := filepath.Join(dir, "config.json")
	switch {
	case c.Quant != nil && c.Quant.Method != "":
		return servedQuant{c.Quant.Method, src + " quantization_config.quant_method"}, true
	case c.TorchDtype != "":
		return servedQuant{c.TorchDtype, src + " torch_dtype"}, true
	case c.Dtype != "":
		return servedQuant{c.Dtype, src + " dtype"}, true
	}
	return servedQuant{}, false
}
