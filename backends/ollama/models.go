package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/planrun/planrun/backends"
)

// The model endpoints (/api/show, /api/tags, /api/pull, /api/ps) go through the timing
// core's side requests, so they share the measured requests' key, headers, redaction and
// error classes.

// Explain implements backends.Adapter: an unknown model gets the server's model list.
func (b *Backend) Explain(ctx context.Context, e *backends.Error, req backends.Request) {
	if models, absent, ok := backends.ModelAbsent(ctx, e, req.Model, b.Models); ok && absent {
		e.Message += " Model " + strconv.Quote(req.Model) + " is not on this server (ollama pull it first); the server has: " +
			backends.ModelList(models) + "." + backends.NearestModel(req.Model, models)
	}
}

// Models returns the server's model names (GET /api/tags), fetched once and cached.
// The lock is held through the fetch so that concurrent failures ask only once.
func (b *Backend) Models(ctx context.Context) ([]string, *backends.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.models != nil {
		return b.models, nil
	}
	var v api.ListResponse
	if e := b.Core().GetJSON(ctx, b.base+"/api/tags", &v); e != nil {
		return nil, e
	}
	b.keep(v)
	return b.models, nil
}

// digest returns the /api/tags digest of model id (by backends.SameModel), so a result
// can name exactly which weights produced it. Call after Models.
func (b *Backend) digest(id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := b.digests[id]; d != "" {
		return d
	}
	for name, d := range b.digests {
		if backends.SameModel(name, id) {
			return d
		}
	}
	return ""
}

// ShowModel implements backends.ModelShower with /api/show. A missing model is an
// error of class backends.ErrNotFound.
func (b *Backend) ShowModel(ctx context.Context, model string) (backends.ModelDetails, error) {
	var sr api.ShowResponse
	if e := b.Core().PostJSON(ctx, b.base+"/api/show", api.ShowRequest{Model: model}, &sr); e != nil {
		return backends.ModelDetails{}, fmt.Errorf("ollama /api/show %s: %w", model, e)
	}
	d := sr.Details
	return backends.ModelDetails{ParameterSize: d.ParameterSize, QuantizationLevel: d.QuantizationLevel,
		Family: d.Family, Format: d.Format, Info: sr.ModelInfo}, nil
}

// ModelDigest implements backends.ModelManager with a fresh /api/tags (a pull may have
// just added the model), which also renews the list Models caches.
func (b *Backend) ModelDigest(ctx context.Context, model string) (digest, name string, err error) {
	lr, e := b.listTags(ctx)
	if e != nil {
		return "", "", e
	}
	for _, m := range lr.Models {
		for _, n := range []string{m.Name, m.Model} {
			if n != "" && backends.SameModel(n, model) {
				return m.Digest, n, nil
			}
		}
	}
	return "", "", fmt.Errorf("%q is not in the server's list of %d models", model, len(lr.Models))
}

// listTags reads /api/tags and keeps the names and digests for Models and Probe.
func (b *Backend) listTags(ctx context.Context) (api.ListResponse, *backends.Error) {
	var v api.ListResponse
	e := b.Core().GetJSON(ctx, b.base+"/api/tags", &v)
	if e == nil {
		b.mu.Lock()
		b.keep(v)
		b.mu.Unlock()
	}
	return v, e
}

// keep caches a listing's names and digests; the caller holds b.mu.
func (b *Backend) keep(v api.ListResponse) {
	b.models = make([]string, 0, len(v.Models))
	b.digests = make(map[string]string, len(v.Models))
	for _, m := range v.Models {
		b.models = append(b.models, m.Name)
		if m.Digest != "" {
			b.digests[m.Name] = m.Digest
		}
	}
}

// LoadedModels implements backends.ServerMemory with /api/ps.
func (b *Backend) LoadedModels(ctx context.Context) ([]backends.LoadedModel, error) {
	var ps api.ProcessResponse
	if e := b.Core().GetJSON(ctx, b.base+"/api/ps", &ps); e != nil {
		return nil, fmt.Errorf("ollama /api/ps: %w", e)
	}
	models := make([]backends.LoadedModel, 0, len(ps.Models))
	for _, m := range ps.Models {
		models = append(models, backends.LoadedModel{Name: m.Name, SizeBytes: m.Size, SizeVRAMBytes: m.SizeVRAM, ContextLength: m.ContextLength})
	}
	// The server lists them by when each expires, which every request moves; by name,
	// the manifest of two runs with the same models says the same.
	slices.SortFunc(models, func(a, b backends.LoadedModel) int { return strings.Compare(a.Name, b.Name) })
	return models, nil
}

// PullModel implements backends.ModelManager with a streamed /api/pull. It tells every
// new status, and each layer's download in steps of a quarter so a big model does not
// flood the log. It succeeds only on the server's final "success": a stream that just
// stops is an error.
func (b *Backend) PullModel(ctx context.Context, model string, progress func(string)) error {
	stream := true
	body, e := b.Core().PostStream(ctx, b.base+"/api/pull", api.PullRequest{Model: model, Stream: &stream})
	if e != nil {
		return e
	}
	defer body.Close()
	var (
		lastStatus string
		shown      = map[string]int64{} // layer digest → last quarter told
	)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var p struct {
			api.ProgressResponse
			Error string `json:"error"`
		}
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("reading the pull stream: %w (line %s)", err, backends.Excerpt(line))
		}
		if p.Error != "" {
			return errors.New(p.Error)
		}
		if p.Status == "success" {
			progress("success")
			return nil
		}
		if p.Digest != "" && p.Total > 0 {
			q := p.Completed * 4 / p.Total
			if last, ok := shown[p.Digest]; !ok || q > last {
				shown[p.Digest] = q
				progress(fmt.Sprintf("%s %s %d%% of %.1f MB", p.Status, shortDigest(p.Digest), q*25, float64(p.Total)/1e6))
			}
			lastStatus = p.Status
			continue
		}
		if p.Status != lastStatus {
			progress(p.Status)
			lastStatus = p.Status
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the pull stream: %w", err)
	}
	return fmt.Errorf("the pull stream ended before \"success\" (last status %q)", lastStatus)
}

func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	return d[:min(len(d), 12)]
}

// ContextLength implements backends.ContextLimiter. Ollama does not refuse a prompt past
// the model's context: it cuts it (prompt_eval_count then stops at num_ctx) and answers
// as if nothing happened, so such requests must be caught before they are sent. The
// context a request gets is the num_ctx it sends (the backend's extra_fields options),
// else the model's PARAMETER num_ctx (/api/show), else what /api/ps says the loaded model
// runs with (servers that report it), capped at the context the model was trained for.
// The server's own default (OLLAMA_CONTEXT_LENGTH) is not visible through the API:
// without any of these only the trained context bounds it (the default may be lower),
// and without that the context is unknown (ok false).
func (b *Backend) ContextLength(ctx context.Context, model string) (int, bool) {
	var sr api.ShowResponse
	if e := b.Core().PostJSON(ctx, b.base+"/api/show", api.ShowRequest{Model: model}, &sr); e != nil {
		return 0, false
	}
	n := requestNumCtx(b.cfg.ExtraFields)
	if n == 0 {
		n = parameterInt(sr.Parameters, "num_ctx")
	}
	if n == 0 {
		if loaded, err := b.LoadedModels(ctx); err == nil {
			for _, m := range loaded {
				if backends.SameModel(m.Name, model) {
					n = m.ContextLength
				}
			}
		}
	}
	if trained := trainedContext(sr.ModelInfo); trained > 0 && (n == 0 || n > trained) {
		n = trained // Ollama lowers a larger num_ctx to the trained context
	}
	return n, n > 0
}

// requestNumCtx is the num_ctx the backend sends in every request's options; 0 if none.
func requestNumCtx(extra map[string]any) int {
	opts, _ := extra["options"].(map[string]any)
	switch v := opts["num_ctx"].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

// parameterInt reads one numeric parameter from /api/show's "parameters" text, which
// holds one "name   value" line per PARAMETER of the Modelfile; 0 if absent.
func parameterInt(params, name string) int {
	for _, line := range strings.Split(params, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// trainedContext is the model's <architecture>.context_length from its GGUF metadata.
func trainedContext(info map[string]any) int {
	arch, _ := info["general.architecture"].(string)
	if n, ok := info[arch+".context_length"].(float64); ok {
		return int(n)
	}
	return 0
}

// WarmConnections implements backends.ConnectionWarmer with GETs of /api/version.
func (b *Backend) WarmConnections(ctx context.Context, n int) int {
	return b.Core().Warm(ctx, b.base+"/api/version", n)
}
