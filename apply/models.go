package apply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/planrun/planrun/apply/pins"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/checkpoint"
)

// backendSet is what one apply learns about its backends, cell by cell: each backend
// built, by backendKey; each backend and model's probe outcome (nil: usable), by
// backendKey and model id; the backends that can serve nothing, by backendKey (and by
// address for a missing key); the models each backend's probe listed; and each model's
// shape for the VRAM estimate.
type backendSet struct {
	built    map[string]backends.Backend
	probed   map[string]error
	unusable map[string]error
	listed   map[string][]string
	shapes   map[string]modelShape
}

func newBackendSet() backendSet {
	return backendSet{built: map[string]backends.Backend{}, probed: map[string]error{}, unusable: map[string]error{},
		shapes: map[string]modelShape{}}
}

// showTimeout bounds /api/show and /api/tags: both answer from the server's own disk.
const showTimeout = 30 * time.Second

// ensureModel makes sure a cell's model is on a server that manages models by name
// (a backends.ModelManager, Ollama) before anything is measured, as the backend's
// ensure_model says: "check" fails the cell with the command that gets the model,
// "pull" pulls it (progress as notes), "off" does nothing. It records the model's
// digest, parameter size and quantization level in the manifest. Other servers have no
// model API to ask, so they pass through.
func (a *applier) ensureModel(ctx context.Context, cell *plan.Cell, b backends.Backend) error {
	be := cell.Backend
	mm, ok := b.(backends.ModelManager)
	if !ok || be.EnsureModel == "" || be.EnsureModel == plan.EnsureModelOff {
		return nil
	}
	id := cell.ModelID
	info, err := showModel(ctx, mm, id)
	var e *backends.Error
	if errors.As(err, &e) && e.Class == backends.ErrNotFound {
		if be.EnsureModel != plan.EnsureModelPull {
			return missingModelError(cell, a.known.listed[backendKey(cell)])
		}
		a.note("%s: model %q is not on %s; pulling it (ensure_model = \"pull\")", cell.ID, id, be.URL)
		began := time.Now()
		if err := mm.PullModel(ctx, id, func(msg string) { a.info("%s: pull %s: %s", cell.ID, id, msg) }); err != nil {
			return fmt.Errorf("pulling model %q into the Ollama server at %s: %w", id, be.URL, err)
		}
		a.note("%s: pulled %q in %s", cell.ID, id, time.Since(began).Round(time.Millisecond))
		info, err = showModel(ctx, mm, id)
	}
	if err != nil {
		return fmt.Errorf("checking model %q on the Ollama server at %s: %w", id, be.URL, err)
	}
	// The digest is only in the listing; a server that cannot list still measures.
	dctx, cancel := context.WithTimeout(ctx, showTimeout)
	digest, name, err := mm.ModelDigest(dctx, id)
	cancel()
	if err != nil {
		a.note("%s: model %q: no digest from /api/tags: %v", cell.ID, id, err)
	} else {
		info.Digest, info.Name = digest, name
	}
	key := be.Addr + " " + id
	a.rec.recordModel(key, info)
	a.info("%s: model %s", cell.ID, info)
	return nil
}

// showModel is the model's details for the manifest, named as the plan names it.
func showModel(ctx context.Context, mm backends.ModelManager, model string) (ledger.ModelInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, showTimeout)
	defer cancel()
	d, err := mm.ShowModel(ctx, model)
	return ledger.ModelInfo{Name: model, ParameterSize: d.ParameterSize, QuantizationLevel: d.QuantizationLevel,
		Family: d.Family, Format: d.Format}, err
}

// modelNote is the row note naming the model a cell measured ("model tiny:latest
// sha256:…, 1.2M params, F16, llama"), empty when ensureModel recorded none.
func (a *applier) modelNote(cell *plan.Cell) string {
	info, ok := a.rec.model(cell.Backend.Addr + " " + cell.ModelID)
	if !ok {
		return ""
	}
	return "model " + info.String()
}

// missingModelError says which model is missing where, what the server has (as its probe
// listed it) with the name most likely meant, and the ways to get it.
func missingModelError(cell *plan.Cell, have []string) error {
	id, be := cell.ModelID, cell.Backend
	where := "the server's setup"
	if cell.Server != nil {
		where = fmt.Sprintf("server %q's setup", cell.Server.Name)
	}
	has := "."
	if have != nil { // nil: not listed (the probe did not get that far)
		has = fmt.Sprintf(" (it has: %s).%s", backends.ModelList(have), backends.NearestModel(id, have))
	}
	return fmt.Errorf("model %q is not on the Ollama server at %s%s Get it with `ollama pull %s` "+
		"(or `ollama create %s -f Modelfile` for a local GGUF, e.g. in %s), "+
		"or set ensure_model = \"pull\" on backend %s to have planrun pull it", id, ledger.SafeURL(be.URL), has,
		id, id, where, be.Addr)
}

// recordWeights records the weights an OpenAI-protocol server says it loaded for the
// cell's model (vLLM's root) and, when the server runs on this machine (plan-managed,
// or at a loopback address) and the root is a checkpoint directory here, their digest:
// vLLM reports none, and a path alone does not tell changed weights apart.
func (a *applier) recordWeights(cell *plan.Cell, root string) {
	key := cell.Backend.Addr + " " + cell.ModelID
	a.rec.recordRoot(key, root)
	if cell.Server == nil && !loopback(cell.Backend.URL) || !checkpoint.IsCheckpoint(root) {
		return
	}
	began := time.Now()
	d, hashed, err := checkpoint.Digest(root, checkpoint.CacheFile())
	if err != nil {
		a.note("%s: weights %s: no digest: %v", cell.ID, root, err)
		return
	}
	a.rec.recordDigest(key, d)
	if hashed > 0 {
		a.info("%s: weights %s: %s (%.1f MB hashed in %s)", cell.ID, root, d, float64(hashed)/1e6, time.Since(began).Round(time.Millisecond))
	}
}

// loopback reports whether the URL's host is this machine's loopback address.
func loopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	if p.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(p.Hostname())
	return ip != nil && ip.IsLoopback()
}

// backendKey names a cell's backend client: one backend block serves several hosts when
// a matrix url gives each cell its own URL, and each host needs its own client.
func backendKey(cell *plan.Cell) string {
	if n := pins.Threads(cell); n > 0 {
		return fmt.Sprintf("%s %s num_thread=%d", cell.Backend.Addr, cell.Backend.URL, n) // hardware.go
	}
	return cell.Backend.Addr + " " + cell.Backend.URL
}
